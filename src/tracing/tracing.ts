// Traces for one config (telemetry.traces): a tracer provider of its own,
// never registered globally (no context manager, nothing patched), its
// sampler, and the batch export over OTLP/HTTP. Built with the runtime and
// closed with it, so a reload that changes the settings swaps the exporter,
// and each worker process builds its own. A request asks `start` once, at
// arrival: a request that is not sampled gets no trace and no span object at
// all; with the ratio at 0 and no sampled parent the tracer is not even
// asked; at a ratio between 0 and 1 the ratio is tried on the trace id the
// root span would take before any span exists. Off (telemetry.traces
// absent), the runtime has no Tracing and the request path checks one
// undefined field.
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Context, type SpanContext } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, ParentBasedSampler, RandomIdGenerator, SamplingDecision, TraceIdRatioBasedSampler, type IdGenerator, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { GatewayConfig } from '../config/schema';
import { ConfigError } from '../config/load';
import { shownUrl } from '../config/shown-url';
import type { RequestContext } from '../contract/plugin';
import { packageVersion } from '../plumbing/version';
import { CountingProcessor, traceCounters } from './export';
import { RequestTrace, type TraceKit } from './request-trace';
import { recordToolCall, toolCallParents, type ToolCallFacts } from './tool-span';
import { disabledByEnv, traceSettings, type TraceSettings } from './settings';

export interface TracingDeps {
  env: NodeJS.ProcessEnv;
  /** The config file, named by a problem. */
  file: string;
  metrics?: Registry;
  logger: Logger;
}

const propagator = new W3CTraceContextPropagator();

/** The provider's ids: a root span takes the trace id its sampling was decided on. */
class DecidedIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  /** Set just before a root span starts; taken once. */
  decided?: string;

  fresh(): string {
    return this.random.generateTraceId();
  }

  generateTraceId(): string {
    const id = this.decided ?? this.random.generateTraceId();
    this.decided = undefined;
    return id;
  }

  generateSpanId(): string {
    return this.random.generateSpanId();
  }
}

export class Tracing {
  private readonly kit: TraceKit;

  constructor(
    readonly settings: TraceSettings,
    private readonly provider: BasicTracerProvider,
    private readonly ids: DecidedIds,
    /** The provider's own ratio sampler (its root sampler when parent-based). */
    private readonly byRatio: TraceIdRatioBasedSampler,
    routeNames: readonly string[],
  ) {
    this.kit = { tracer: provider.getTracer('sluice', packageVersion()), captureContent: settings.captureContent, routeNames };
  }

  /**
   * The request's trace when it is sampled, else undefined. `route`: the
   * route template (http.route), which with the method names the span.
   */
  start(ctx: Pick<RequestContext, 'id' | 'protocol'>, req: IncomingMessage, route: string): RequestTrace | undefined {
    let parent: Context = ROOT_CONTEXT;
    if (req.headers.traceparent !== undefined) parent = propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    if (!this.sampled(parent === ROOT_CONTEXT ? undefined : trace.getSpanContext(parent))) return undefined;
    const method = req.method ?? 'GET';
    const span = this.kit.tracer.startSpan(`${method} ${route}`, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': method, 'http.route': route, 'url.scheme': 'http', 'sluice.request_id': ctx.id, 'sluice.protocol': ctx.protocol },
    }, parent);
    return new RequestTrace(this.kit, span, ctx.protocol);
  }

  /** One finished MCP tool call's span, when sampled as a request is (its parent's flag, else the ratio). */
  toolCall(facts: ToolCallFacts): void {
    const { parent, link } = toolCallParents(facts);
    if (!this.sampled(parent === ROOT_CONTEXT ? undefined : trace.getSpanContext(parent))) return;
    recordToolCall(this.kit.tracer, facts, parent, link);
  }

  /**
   * The sampler's decision, before any span exists, as the provider's
   * sampler would make it: a parent's sampled flag (parent-based), else the
   * ratio on the trace id: the parent's, or the one the root span will take.
   */
  private sampled(remote: SpanContext | undefined): boolean {
    const { ratio, parentBased } = this.settings;
    if (remote !== undefined && parentBased) return (remote.traceFlags & TraceFlags.SAMPLED) !== 0;
    if (ratio === 0 || ratio === 1) return ratio === 1;
    const id = remote?.traceId ?? this.ids.fresh();
    if (this.byRatio.shouldSample(ROOT_CONTEXT, id).decision !== SamplingDecision.RECORD_AND_SAMPLED) return false;
    if (remote === undefined) this.ids.decided = id;
    return true;
  }

  /** Exports what is queued, waiting on the collector no longer than one export's timeout. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => { timer = setTimeout(resolve, this.settings.timeoutMs); });
    await Promise.race([this.provider.shutdown().catch(() => undefined), bound]);
    clearTimeout(timer);
  }
}

/**
 * The config's tracing, or undefined when it has none (or OTEL_SDK_DISABLED,
 * OTEL_TRACES_EXPORTER=none turn it off). Throws a ConfigError with the
 * problems of the OTEL_* variables, each on its own line.
 */
export function createTracing(config: GatewayConfig, deps: TracingDeps): Tracing | undefined {
  const traces = config.telemetry.traces;
  if (traces === undefined || disabledByEnv(deps.env)) return undefined;
  const { settings, problems } = traceSettings(traces, deps.env);
  if (settings === undefined) throw new ConfigError(deps.file, problems);
  // The batch processor sends one batch at a time; the exporter lets go of a
  // finished one a moment after it reports it, so two may overlap, never
  // more: a collector that never answers holds two batches, not thirty.
  const options = { url: settings.endpoint, headers: settings.headers, timeoutMillis: settings.timeoutMs, concurrencyLimit: 2 };
  const exporter: SpanExporter = settings.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options);
  const processor = new CountingProcessor(exporter, settings.maxQueueSize, settings.scheduledDelayMs, settings.timeoutMs, traceCounters(deps.metrics), deps.logger, shownUrl(settings.endpoint));
  const root = new TraceIdRatioBasedSampler(settings.ratio);
  const ids = new DecidedIds();
  const provider = new BasicTracerProvider({
    sampler: settings.parentBased ? new ParentBasedSampler({ root }) : root,
    idGenerator: ids,
    resource: resourceFromAttributes({ 'service.name': 'sluice', 'service.version': packageVersion(), 'process.pid': process.pid, ...settings.resource }),
    spanProcessors: [processor],
  });
  return new Tracing(settings, provider, ids, root, config.routes.map((r) => r.model));
}
