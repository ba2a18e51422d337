// The composition root: built-in plugins, config, runtime, app. server.ts puts
// it on a socket; tests call it directly with a config of their own.
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { createApp, type GatewayState } from './app';
import { shadowedEndpoints } from './api/passthrough/routes';
import type { ExtraCheck, LoadedConfig } from './config/load';
import type { GatewayConfig } from './config/schema';
import { PluginRegistry } from './pipeline/registry';
import type { PluginDefinition, PrimaryLink, Services, WorkerLink } from './contract/plugin';
import type { RedisClient } from './contract/types';
import { buildRuntime, runtimeConfigCheck, type CoreServices, type Runtime } from './runtime';
import { createMetricsRegistry } from './metrics/registry';
import { attachRedis, closeRedisClient } from './redis/client';
import { watchRedisUp } from './redis/metrics';
import { StoreHealth } from './redis/store-health';
import { LeasePools } from './admission/stores';
import { serveLeases } from './admission/primary-leases';
import { LimiterPools } from './limiters/pools';
import { serveLimiters } from './limiters/cluster';
import { ResponseState } from './responses-store';
import { serveResponses } from './responses-store';
import { KeyHost, type KeySource } from './keys/host';
import { ClusterKeys } from './keys/cluster-keys';
import { startAdminServer, type AdminServer } from './admin/server';
import { SpendRecorder, type SpendSource } from './spend';
import { builtinPlugins } from '../plugins';

export interface Gateway {
  state: GatewayState;
  app: ReturnType<typeof createApp>;
  registry: PluginRegistry;
  services: CoreServices;
  /** The runtime keys this process keeps itself (undefined in a worker, which follows its primary's): what the admin listener writes to. */
  keyHost?: KeyHost;
  /** What a new config must pass besides the schema (plugin settings, route lists): loadConfigFile's extra check. */
  check: ExtraCheck;
  /** Builds a runtime from a new config and swaps it in; the old one closes when its requests are done. */
  swap(loaded: LoadedConfig): Promise<Runtime>;
  close(): Promise<void>;
}

/**
 * A metrics listener with nothing to count is a dashboard of "No data": warned
 * at start and on every reload while the listener is on and the metrics plugin is not in the chain.
 */
export function warnIfMetricsUncounted(listenerOn: boolean, config: Pick<GatewayConfig, 'plugins'>, logger: Logger, plugins: readonly PluginDefinition[] = builtinPlugins): void {
  if (!listenerOn) return;
  const counting = plugins.filter((def) => def.recordsRequests === true);
  if (config.plugins.some((p) => counting.some((def) => def.name === p.name))) return;
  logger.warn({ fix: `add "- { name: ${counting[0]?.name ?? 'metrics'} }" last in plugins, or set server.metrics.port: 0` }, 'metrics listener is on but no plugin in plugins counts requests: no request is counted');
}

/**
 * What a config does that its operator may not expect, warned at start and on
 * every reload: a metrics listener with nothing to count, a pass-through
 * route that keeps one of the gateway's own input endpoints from serving.
 */
export function warnAboutConfig(listenerOn: boolean, config: Pick<GatewayConfig, 'plugins' | 'passthrough'>, logger: Logger): void {
  warnIfMetricsUncounted(listenerOn, config, logger);
  for (const { index, path } of shadowedEndpoints(config.passthrough)) {
    logger.warn({ route: `passthrough[${index}]`, path, fix: 'remove the pass-through route to have the gateway serve the path (docs/endpoints.md#pass-through-routes)' },
      'a pass-through route serves a path the gateway serves itself: its requests pass through, without the endpoint\'s limits, prices, token budgets or usage records');
  }
}

/** The checks every config gets, with the built-in plugins (and any extra ones): a start, a reload, `sluice config check`. */
export const gatewayConfigCheck = (extraPlugins: PluginDefinition[] = []): ExtraCheck =>
  runtimeConfigCheck({ registry: new PluginRegistry([...builtinPlugins, ...extraPlugins]) });

/**
 * The primary's side of the plugins (server.workers above 1): each one's
 * setUpPrimary, once, for every built-in plugin and for the third-party ones
 * a config names. Call it with each config before the workers get it.
 */
export function primaryPlugins(primary: PrimaryLink): (loaded: LoadedConfig) => void {
  // The core's own first: in-flight leases and request counts (the budgets', the MCP limits') exact across the workers, and the stored responses without Redis.
  serveLeases(primary);
  serveLimiters(primary);
  const responses = serveResponses(primary);
  const registry = new PluginRegistry(builtinPlugins);
  const done = new WeakSet<PluginDefinition>();
  const setUp = (def: PluginDefinition): void => {
    if (done.has(def)) return;
    done.add(def);
    def.setUpPrimary?.(primary);
  };
  builtinPlugins.forEach(setUp);
  return (loaded) => {
    responses.apply(loaded.config.responses);
    registry.resolveChain(loaded.config.plugins, dirname(loaded.file), []).forEach(({ def }) => setUp(def));
  };
}

/** `cluster`: the link to the primary, in a worker (server.workers above 1). */
export async function createGateway(loaded: LoadedConfig, logger: Logger, extraPlugins: PluginDefinition[] = [], cluster?: WorkerLink): Promise<Gateway> {
  const registry = new PluginRegistry([...builtinPlugins, ...extraPlugins]);
  const shared: Services = { metrics: createMetricsRegistry(), ...(cluster && { cluster }) };
  // The stored responses read Redis from the same services once a config names it.
  const keyHost = cluster === undefined ? new KeyHost(logger) : undefined;
  const keys: KeySource = keyHost ?? new ClusterKeys(cluster!, logger);
  shared.teams = keys.keys.teams;
  const services: CoreServices = Object.assign(shared, { leases: new LeasePools(cluster), limiters: new LimiterPools(cluster), responses: new ResponseState({ services: shared, logger }), keys, spend: new SpendRecorder({ services: shared, logger }) });
  const kept = new Map<PluginDefinition, unknown>();
  const keptOf = (def: PluginDefinition): unknown => {
    if (def.keep === undefined) return undefined;
    if (!kept.has(def)) kept.set(def, def.keep(services));
    return kept.get(def);
  };
  const redis = async (next: LoadedConfig): Promise<void> => {
    const { config } = next;
    await attachRedis(services, config, logger);
    if (services.redis !== undefined && services.storeHealth === undefined) services.storeHealth = new StoreHealth(logger, 'redis', services.metrics);
    watchRedisUp(services.metrics, services);
    services.responses.apply(config);
    services.spend.apply(config);
    await keys.apply(next, services.redis);
  };
  const deps = { registry, logger, services, keptOf };
  let runtime: Runtime;
  try {
    await redis(loaded);
    runtime = await buildRuntime(loaded, deps);
  } catch (err) {
    await keys.close();
    await services.responses.close();
    await closeRedisClient(services.redis); // a start that fails leaves no connection behind
    throw err;
  }
  const state: GatewayState = { runtime, ready: true, logger, active: new Set() };
  return {
    state,
    app: createApp(state),
    registry,
    services,
    keyHost,
    check: runtimeConfigCheck(deps),
    async swap(next) {
      await redis(next);
      const runtime = await buildRuntime(next, deps);
      const old = state.runtime;
      state.runtime = runtime;
      void old.retire();
      return runtime;
    },
    async close() {
      await state.runtime.close();
      await services.spend.close();
      await keys.close();
      await services.responses.close();
      await closeRedisClient(services.redis);
    },
  };
}

/**
 * The admin listener (admin.port; none when it is 0 or there is no admin
 * section), serving the runtime keys this process keeps: one gateway's, or
 * the primary's for its workers. `current` is the config in force;
 * `listenOn` overrides admin.host and admin.port (tests: port 0).
 */
export async function startAdminListener(host: KeyHost, current: () => LoadedConfig, services: { redis?: RedisClient; spend: SpendSource }, logger: Logger, extraPlugins: PluginDefinition[] = [], listenOn?: { host: string; port: number }): Promise<AdminServer | undefined> {
  const admin = current().config.admin;
  if (admin === undefined || (admin.port === 0 && listenOn === undefined)) return undefined;
  const registry = new PluginRegistry([...builtinPlugins, ...extraPlugins]);
  return startAdminServer({ current, registry, store: () => host.store, teams: () => host.keys.teams, redis: () => services.redis, spend: () => services.spend.reader, logger }, listenOn ?? admin);
}
