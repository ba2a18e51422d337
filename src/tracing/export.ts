// The way out for ended spans: the SDK's BatchSpanProcessor (a bounded
// queue, batches sent in the background) in front of the OTLP exporter, with
// the count of what it drops. The processor drops silently when its queue is
// full, and a batch the collector refused or never answered is lost: both
// are counted here, by mirroring the queue's length (spans in on onEnd, out
// when a batch is handed to the exporter) and by the exporter's result. A
// collector that is down, slow or refusing costs a request nothing: the
// request only appends to the queue.
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Context } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface TraceCounters {
  exported(n: number): void;
  dropped(reason: 'queue_full' | 'export_failed', n: number): void;
}

const byRegistry = new WeakMap<Registry, TraceCounters>();
const NONE: TraceCounters = { exported: () => undefined, dropped: () => undefined };

/** The counters, registered once per registry (a reload builds its exporter anew). */
export function traceCounters(registry: Registry | undefined): TraceCounters {
  if (registry === undefined) return NONE;
  const known = byRegistry.get(registry);
  if (known !== undefined) return known;
  const exported = new Counter({ name: 'sluice_trace_spans_exported_total', help: 'Spans the trace collector accepted.', registers: [registry] });
  const dropped = new Counter({
    name: 'sluice_trace_spans_dropped_total', help: 'Spans lost: the export queue was full (queue_full), or the collector refused, failed or did not answer in time (export_failed).',
    labelNames: ['reason'], registers: [registry],
  });
  dropped.inc({ reason: 'queue_full' }, 0);
  dropped.inc({ reason: 'export_failed' }, 0);
  const counters: TraceCounters = { exported: (n) => exported.inc(n), dropped: (reason, n) => dropped.inc({ reason }, n) };
  byRegistry.set(registry, counters);
  return counters;
}

/** What both wrappers share: the mirrored queue length, the counters, and whether the collector is failing (logged once per change). */
class ExportState {
  queued = 0;
  failing = false;

  constructor(readonly counters: TraceCounters, private readonly logger: Logger, private readonly endpoint: string) {}

  result(n: number, result: ExportResult): void {
    if (result.code === ExportResultCode.SUCCESS) {
      this.counters.exported(n);
      if (this.failing) this.logger.info({ endpoint: this.endpoint }, 'trace export recovered');
      this.failing = false;
      return;
    }
    this.counters.dropped('export_failed', n);
    if (!this.failing) this.logger.warn({ endpoint: this.endpoint, err: result.error?.message }, 'trace export failed');
    this.failing = true;
  }
}

const DONE: ExportResult = { code: ExportResultCode.SUCCESS };

/**
 * The exporter as the processor sees it: each batch leaves the mirrored
 * queue, and its result is counted and logged here. The processor always
 * hears that the batch is done: told of a failure, it would start its next
 * batch while another is still being sent, and batches would pile up at a
 * collector that does not answer.
 */
class CountingExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter, private readonly state: ExportState) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const { state } = this;
    state.queued -= spans.length;
    this.inner.export(spans, (result) => {
      state.result(spans.length, result);
      done(DONE);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** The batch processor, counting the spans its full queue turns away. */
export class CountingProcessor implements SpanProcessor {
  private readonly batch: BatchSpanProcessor;
  private readonly state: ExportState;
  private closed = false;

  constructor(exporter: SpanExporter, private readonly maxQueueSize: number, scheduledDelayMs: number, timeoutMs: number, counters: TraceCounters, logger: Logger, endpoint: string) {
    this.state = new ExportState(counters, logger, endpoint);
    // The exporter gives a batch up after its timeout (its retries included); the processor waits a little longer, so it rarely moves on first.
    this.batch = new BatchSpanProcessor(new CountingExporter(exporter, this.state), { maxQueueSize, scheduledDelayMillis: scheduledDelayMs, exportTimeoutMillis: timeoutMs + 1_000 });
  }

  onStart(span: Span, parent: Context): void {
    this.batch.onStart(span, parent);
  }

  onEnd(span: ReadableSpan): void {
    if (this.closed) return;
    const { state } = this;
    if (state.queued >= this.maxQueueSize) {
      state.counters.dropped('queue_full', 1);
      return;
    }
    state.queued++;
    this.batch.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.batch.forceFlush();
  }

  shutdown(): Promise<void> {
    this.closed = true;
    return this.batch.shutdown();
  }
}
