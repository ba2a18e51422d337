// Reload on SIGHUP: re-read the config file; a valid one takes effect for new
// requests at once, an invalid one is rejected whole and the old one stays.
// Requests in flight finish under the config they started with. With several
// workers the primary reads and checks the file once and hands the text to
// every worker (src/cluster/primary.ts); the counting and the log lines are
// the same either way.
import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import { ConfigError, loadConfigFile } from './config/load';
import type { GatewayConfig } from './config/schema';
import { warnAboutConfig, type Gateway } from './gateway';

const METRIC = 'sluice_config_reloads_total';

export type ReloadCounter = Counter<'result'> | undefined;

export function reloadCounter(registry: Registry | undefined): ReloadCounter {
  if (registry === undefined) return undefined;
  const existing = registry.getSingleMetric(METRIC) as Counter<'result'> | undefined;
  if (existing) return existing;
  const counter = new Counter({ name: METRIC, help: 'Config reloads (SIGHUP), by result: success or failure.', labelNames: ['result'], registers: [registry] });
  counter.inc({ result: 'success' }, 0);
  counter.inc({ result: 'failure' }, 0);
  return counter;
}

/** The admin listener's settings: fixed at start, like the server's. */
const adminListenerOf = (config: Pick<GatewayConfig, 'admin'>) => (config.admin === undefined || config.admin.port === 0 ? null : [config.admin.host, config.admin.port]);

/** The lines and count of a reload that took effect; `before` is the config it replaced. */
export function reportReloaded(counter: ReloadCounter, logger: Logger, file: string, before: Pick<GatewayConfig, 'server' | 'admin'>, config: GatewayConfig, metricsListenerOn: boolean, extra: Record<string, unknown> = {}): void {
  counter?.inc({ result: 'success' });
  logger.info({ config: file, keys: config.keys.length, routes: config.routes.length, ...extra }, 'config reloaded');
  if (JSON.stringify(before.server) !== JSON.stringify(config.server)) logger.warn({ config: file }, 'server.* settings (listeners, workers, body limit aside) take effect only after a restart');
  if (JSON.stringify(adminListenerOf(before)) !== JSON.stringify(adminListenerOf(config))) logger.warn({ config: file }, 'the admin listener (admin.host, admin.port) changes only after a restart; admin keys and the runtime keys\' store apply now');
  warnAboutConfig(metricsListenerOn, config, logger);
}

/** The line and count of a reload that was refused: the old config stays. */
export function reportReloadFailed(counter: ReloadCounter, logger: Logger, file: string, err: unknown, extra: Record<string, unknown> = {}): void {
  counter?.inc({ result: 'failure' });
  const problems = err instanceof ConfigError ? err.problems : [(err as Error).message];
  logger.error({ config: file, problems, ...extra }, 'config reload failed');
}

/** Runs reloads one after another, however the signals overlap. */
export function serialized(reloadOnce: () => Promise<boolean>): () => Promise<boolean> {
  let queue: Promise<boolean> = Promise.resolve(true);
  return () => (queue = queue.then(reloadOnce));
}

/**
 * The reload action of a single process. `metricsListenerOn`: whether the
 * metrics listener bound at start is serving (a reload cannot change that).
 */
export function createReloader(gateway: Gateway, file: string, logger: Logger, metricsListenerOn = false): () => Promise<boolean> {
  const counter = reloadCounter(gateway.services.metrics);
  return serialized(async () => {
    try {
      const before = gateway.state.runtime.config;
      const runtime = await gateway.swap(loadConfigFile(file, process.env, gateway.check));
      reportReloaded(counter, logger, file, before, runtime.config, metricsListenerOn);
      return true;
    } catch (err) {
      reportReloadFailed(counter, logger, file, err);
      return false;
    }
  });
}
