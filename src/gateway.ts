// The composition root: built-in plugins, config, runtime, app. server.ts puts
// it on a socket; tests call it directly with a config of their own.
import type { Logger } from 'pino';
import { createApp, type GatewayState } from './app';
import type { LoadedConfig } from './config/load';
import { PluginRegistry } from './pipeline/registry';
import type { PluginDefinition, Services } from './pipeline/contract';
import { buildRuntime, type Runtime } from './runtime';
import { createMetricsRegistry } from './metrics/registry';
import { attachRedis, closeRedisClient } from './redis/client';
import { builtinPlugins } from '../plugins';

export interface Gateway {
  state: GatewayState;
  app: ReturnType<typeof createApp>;
  registry: PluginRegistry;
  services: Services;
  /** Builds a runtime from a new config and swaps it in; the old one closes when its requests are done. */
  swap(loaded: LoadedConfig): Promise<Runtime>;
  close(): Promise<void>;
}

/** Plugins that hold the interface's limits even when the config leaves them out. */
export const ALWAYS_ON = ['limits'];

export async function createGateway(loaded: LoadedConfig, logger: Logger, extraPlugins: PluginDefinition[] = []): Promise<Gateway> {
  const registry = new PluginRegistry([...builtinPlugins, ...extraPlugins]);
  const services: Services = { metrics: createMetricsRegistry() };
  await attachRedis(services, loaded.config, logger);
  const deps = { registry, logger, services, alwaysOn: ALWAYS_ON };
  let runtime: Runtime;
  try {
    runtime = await buildRuntime(loaded, deps);
  } catch (err) {
    await closeRedisClient(services.redis); // a start that fails leaves no connection behind
    throw err;
  }
  const state: GatewayState = { runtime, ready: true, logger, active: new Set() };
  return {
    state,
    app: createApp(state),
    registry,
    services,
    async swap(next) {
      await attachRedis(services, next.config, logger);
      const runtime = await buildRuntime(next, deps);
      const old = state.runtime;
      state.runtime = runtime;
      void old.retire();
      return runtime;
    },
    async close() {
      await state.runtime.close();
      await closeRedisClient(services.redis);
    },
  };
}
