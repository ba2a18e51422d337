// Reload on SIGHUP: re-read the config file; a valid one takes effect for new
// requests at once, an invalid one is rejected whole and the old one stays.
// Requests in flight finish under the config they started with.
import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import { ConfigError, loadConfigFile } from './config/load';
import { warnIfMetricsUncounted, type Gateway } from './gateway';

const METRIC = 'sluice_config_reloads_total';

function reloadCounter(registry: Registry | undefined): Counter<'result'> | undefined {
  if (registry === undefined) return undefined;
  const existing = registry.getSingleMetric(METRIC) as Counter<'result'> | undefined;
  if (existing) return existing;
  const counter = new Counter({ name: METRIC, help: 'Config reloads (SIGHUP), by result: success or failure.', labelNames: ['result'], registers: [registry] });
  counter.inc({ result: 'success' }, 0);
  counter.inc({ result: 'failure' }, 0);
  return counter;
}

/** Returns the reload action; overlapping signals run one after another. */
/** `metricsListenerOn`: whether the metrics listener bound at start is serving (a reload cannot change that). */
export function createReloader(gateway: Gateway, file: string, logger: Logger, metricsListenerOn = false): () => Promise<boolean> {
  const counter = reloadCounter(gateway.services.metrics);
  let queue: Promise<boolean> = Promise.resolve(true);
  const reloadOnce = async (): Promise<boolean> => {
    try {
      const before = gateway.state.runtime.config.server;
      const runtime = await gateway.swap(loadConfigFile(file, process.env, gateway.check));
      counter?.inc({ result: 'success' });
      const serverChanged = JSON.stringify(before) !== JSON.stringify(runtime.config.server);
      logger.info({ config: file, keys: runtime.config.keys.length, routes: runtime.config.routes.length }, 'config reloaded');
      if (serverChanged) logger.warn({ config: file }, 'server.* settings (listeners, body limit aside) take effect only after a restart');
      warnIfMetricsUncounted(metricsListenerOn, runtime.config, logger);
      return true;
    } catch (err) {
      counter?.inc({ result: 'failure' });
      const problems = err instanceof ConfigError ? err.problems : [(err as Error).message];
      logger.error({ config: file, problems }, 'config reload failed');
      return false;
    }
  };
  return () => (queue = queue.then(reloadOnce));
}
