// Everything a config compiles into: key index, route table, plugin pipeline,
// upstream proxies, body parser. Built whole before it serves a request; a
// request keeps the runtime it started with, so a reload never changes the
// rules under a request in flight.
import { dirname } from 'node:path';
import type { RequestHandler } from 'express';
import { jsonBodyReader } from './api/json-body';
import type { ApiRuntime } from './api/api-runtime';
import type { Logger } from 'pino';
import type { GatewayConfig, PluginEntry } from './config/schema';
import { ConfigError, type ExtraCheck, type LoadedConfig } from './config/load';
import { buildKeyIndex, type KeyIndex } from './auth/keys';
import type { KeySource } from './keys/host';
import { advertiseProblems, compileRoutes, exactModelIds, type RouteTable } from './routing/routes';
import { closePipeline, createPipeline, type Pipeline } from './pipeline/pipeline';
import type { PluginRegistry } from './pipeline/registry';
import type { PluginDefinition, Services } from './contract/plugin';
import { Admission } from './admission';
import type { LeasePools } from './admission/stores';
import type { LimiterPools } from './limiters/pools';
import { createUpstream, type Upstream } from './proxy/upstream';
import { createReply, type Reply } from './proxy/reply';
import { droppedReporter, type DroppedReporter } from './api/dropped';
import type { ResponseKeeper } from './proxy/exchanges/responses';
import type { ResponseState } from './responses-store';
import { StoredTurns } from './api/stored-turns';
import { fleetMetrics, type FleetMetrics } from './fleet/metrics';
import { scoredMetrics } from './fleet/scored-metrics';
import { startDemoBackend, type DemoBackend } from './demo/backend';
import { compilePassthrough, passthroughProblems, type PassthroughTable } from './api/passthrough/routes';
import { createPassthroughProxy, type PassthroughProxy } from './api/passthrough/proxy';
import type { Tracing } from './tracing/tracing';
import { McpGateway } from './mcp/gateway';
import { compilePrices } from './pricing/prices';
import type { PriceList } from './contract/types';
import type { SpendRecorder } from './spend';

export interface Runtime extends ApiRuntime {
  readonly config: GatewayConfig;
  readonly file: string;
  readonly keys: KeyIndex;
  readonly passthrough: PassthroughTable;
  /** By upstream name, for the upstreams a pass-through route names. */
  readonly passthroughProxies: ReadonlyMap<string, PassthroughProxy>;
  /** The MCP servers at /mcp/<name> (docs/mcp.md). */
  readonly mcp: McpGateway;
  readonly parseJson: RequestHandler;
  /** This config's prices (`pricing`): what a finished request cost. */
  readonly prices: PriceList;
  /** Where each finished request's usage record goes (process-wide, src/spend). */
  readonly spend: SpendRecorder;
  /** This config's traces (telemetry.traces); undefined when off, and then a request does nothing for them. */
  readonly tracing?: Tracing;
  /** Counts a request that runs under this runtime. */
  hold(): void;
  /** Its request is done; a retired runtime closes after its last one. */
  release(): void;
  /** No new requests will come: close once the ones in flight are done. */
  retire(): Promise<void>;
  /** Closes what this runtime owns now. */
  close(): Promise<void>;
}

/** The process-wide services, with the core's own: the lease stores every config's admission uses, the limiters of the MCP tool-call limits, the Responses API's stored turns, the runtime keys, the spend records. */
export type CoreServices = Services & { leases: LeasePools; limiters: LimiterPools; responses: ResponseState; keys: KeySource; spend: SpendRecorder };

export interface RuntimeDeps {
  registry: PluginRegistry;
  logger: Logger;
  services: CoreServices;
  /** What each plugin keeps for the process (its keep()), made on first use. */
  keptOf(def: PluginDefinition): unknown;
}

// Demo backends live as long as the process: image URLs they handed out stay valid across reloads.
const demoBackends = new Map<string, Promise<DemoBackend>>();

function demoBackendFor(url: string | undefined): Promise<DemoBackend> {
  const key = url ?? 'ephemeral';
  let started = demoBackends.get(key);
  if (!started) {
    const parsed = url ? new URL(url) : undefined;
    started = startDemoBackend(parsed?.hostname.replace(/^\[|\]$/g, '') ?? '127.0.0.1', parsed ? Number(parsed.port || 80) : 0);
    // One that could not listen is not kept: a later start or reload tries again.
    started.catch(() => { if (demoBackends.get(key) === started) demoBackends.delete(key); });
    demoBackends.set(key, started);
  }
  return started;
}

export async function closeDemoBackends(): Promise<void> {
  const all = [...demoBackends.values()];
  demoBackends.clear();
  await Promise.allSettled(all.map(async (d) => (await d).close()));
}

type Deps = Pick<RuntimeDeps, 'registry'>;

/**
 * The checks that need more than the schema: route advertise lists,
 * pass-through paths and each plugin's own settings. Starts nothing, and runs on a config the schema
 * rejected too (what of it is valid), so `sluice config check`, a start and a
 * reload list every problem at once. Use it as loadConfigFile's extra check.
 */
export function runtimeConfigCheck(deps: Deps): ExtraCheck {
  return (config, file) => {
    const problems = [...advertiseProblems(config.routes ?? []), ...passthroughProblems(config.passthrough ?? []), ...deps.registry.check(config, dirname(file))];
    deps.registry.resolveChain(config.plugins ?? [], dirname(file), problems);
    return problems;
  };
}

/** The same checks on a valid config, keeping what they compiled; throws ConfigError on a problem. */
export function checkRuntimeConfig(loaded: LoadedConfig, deps: Deps) {
  const problems: string[] = [];
  const routes = compileRoutes(loaded.config.routes, problems, loaded.config.upstreams);
  problems.push(...passthroughProblems(loaded.config.passthrough));
  problems.push(...deps.registry.check(loaded.config, dirname(loaded.file)));
  const resolved = deps.registry.resolveChain(loaded.config.plugins, dirname(loaded.file), problems);
  if (problems.length > 0) throw new ConfigError(loaded.file, problems);
  return { routes, resolved };
}

export async function buildRuntime(loaded: LoadedConfig, deps: RuntimeDeps): Promise<Runtime> {
  const { config, file } = loaded;
  const { routes, resolved } = checkRuntimeConfig(loaded, deps);

  // The OpenTelemetry SDK (some 250 modules) is loaded by a config that traces, not by every gateway.
  const tracing = config.telemetry.traces === undefined ? undefined
    : (await import('./tracing/tracing')).createTracing(config, { env: process.env, file, metrics: deps.services.metrics, logger: deps.logger });
  const admission = new Admission(config, deps.services, deps.logger);
  const prices = compilePrices(config.pricing);
  const { leases: _leases, limiters: _limiters, keys: runtimeKeys, spend, ...services } = deps.services;
  const pipeline = await createPipeline(resolved, { config, logger: deps.logger, services, admission, prices, keptOf: deps.keptOf },
    admission.active ? { name: 'admission', run: (ctx) => admission.admit(ctx) } : undefined)
    .catch(async (err: unknown) => { admission.close(); await tracing?.close(); throw err; });
  const upstreams = new Map<string, Upstream>();
  const reply = createReply(pipeline, deps.logger, prices);
  const fleet = fleetMetrics(deps.services.metrics);
  const engines = scoredMetrics(deps.services.metrics);
  // A model as sent upstream is labelled by its name when the config gives it (a route's exact model or upstreamModel), else "other".
  const configured = new Set([...exactModelIds(config.routes), ...config.routes.flatMap((r) => (r.upstreamModel === undefined ? [] : [r.upstreamModel]))]);
  const modelLabel = (model: string): string => (configured.has(model) ? model : 'other');
  for (const [name, upstream] of Object.entries(config.upstreams)) {
    const url = upstream.format === 'demo' ? (await demoBackendFor(upstream.url)).url : upstream.url;
    const members = upstream.endpoints ?? [{ url: url!, weight: 1 }];
    const setup = { members, clientStallMs: config.server.clientStallMs, streamPingMs: config.server.streamPingMs, modelLabel };
    upstreams.set(name, createUpstream(name, { ...upstream, format: upstream.format === 'demo' ? 'native' : upstream.format, ...setup }, pipeline, reply, fleet, engines));
  }
  const passthroughProxies = new Map<string, PassthroughProxy>();
  for (const name of new Set(config.passthrough.map((p) => p.upstream))) {
    // The config check refused demo upstreams here: each has its url.
    passthroughProxies.set(name, createPassthroughProxy(name, { ...config.upstreams[name], url: config.upstreams[name].url! }, pipeline, deps.logger));
  }
  const mcp = new McpGateway(config, { logger: deps.logger, metrics: deps.services.metrics, spend, tracing, limiters: deps.services.limiters, redis: deps.services.redis, storeHealth: deps.services.storeHealth, pipeline });

  let inflight = 0;
  let retired: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= (async () => {
    await Promise.allSettled([...upstreams.values()].map((u) => u.close()));
    await mcp.close();
    await closePipeline(pipeline);
    admission.close();
    await tracing?.close();
  })());
  return {
    config,
    file,
    // Without an admin section, no runtime key is honoured (its source holds none either).
    keys: buildKeyIndex(config.keys, config.admin === undefined ? undefined : runtimeKeys.keys, runtimeKeys.keys.teams),
    routes,
    pipeline,
    upstreams,
    fleet,
    passthrough: compilePassthrough(config),
    passthroughProxies,
    mcp,
    parseJson: jsonBodyReader(config.server.bodyLimit),
    admission,
    reply,
    dropped: droppedReporter(deps.services.metrics, deps.logger),
    responses: new StoredTurns(deps.services.responses, reply),
    endpointLimits: config.endpointLimits,
    prices,
    spend,
    tracing,
    hold: () => { inflight++; },
    release: () => { if (--inflight === 0) retired?.(); },
    retire: () => new Promise<void>((resolve) => {
      retired = () => void close().then(resolve);
      if (inflight === 0) retired();
    }),
    close,
  };
}
