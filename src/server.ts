// The process: load the config, build the gateway, listen; reload the config
// on SIGHUP; drain and exit 0 on SIGTERM/SIGINT.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, defaultConfigPath, loadConfigFile } from './config/load';
import { createLogger, type Logger } from './log';
import { createGateway, type Gateway } from './gateway';
import { closeDemoBackends } from './runtime';
import { startMetricsServer, type MetricsServer } from './metrics/server';
import { drain } from './drain';
import { createReloader } from './reload';

export interface RunningGateway {
  gateway: Gateway;
  server: Server;
  url: string;
  /** The metrics listener; undefined when server.metrics.port is 0. */
  metrics?: MetricsServer;
  /** Drains and closes everything; resolves when the process may exit. */
  stop(): Promise<void>;
  /** Re-reads the config file (what SIGHUP does); false if it was rejected. */
  reload(): Promise<boolean>;
}

export async function startGateway(file = defaultConfigPath(), logger: Logger = createLogger()): Promise<RunningGateway> {
  const loaded = loadConfigFile(file);
  const gateway = await createGateway(loaded, logger);
  const server = createServer({ keepAliveTimeout: 65_000, headersTimeout: 60_000 }, gateway.app);
  const { host, port } = loaded.config.server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const url = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
  logger.info({ url, config: loaded.file }, 'listening');
  const metrics = await startMetricsListener(gateway, loaded.config.server.metrics, logger);

  const stop = async (): Promise<void> => {
    await drain(server, gateway.state, gateway.state.runtime.config.server.drainSeconds * 1000, logger);
    await gateway.close();
    await metrics?.close();
    await closeDemoBackends();
  };
  return { gateway, server, url, metrics, stop, reload: createReloader(gateway, loaded.file, logger) };
}

/** Port 0 in the config turns the metrics listener off. Host, port and token are read once, at start. */
async function startMetricsListener(gateway: Gateway, options: { host: string; port: number; token?: string }, logger: Logger): Promise<MetricsServer | undefined> {
  const registry = gateway.services.metrics;
  if (options.port === 0 || registry === undefined) return undefined;
  const metrics = await startMetricsServer(registry, options);
  logger.info({ url: `${metrics.url}/metrics`, token: options.token !== undefined }, 'metrics listening');
  return metrics;
}

export async function main(): Promise<void> {
  const logger = createLogger();
  let running: RunningGateway;
  try {
    running = await startGateway(defaultConfigPath(), logger);
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : `cannot start: ${(err as Error).message}`;
    process.stderr.write(`sluice: ${message}\n`);
    process.exit(1);
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.stop().then(() => {
      logger.info('stopped');
      logger.flush();
      setTimeout(() => process.exit(0), 50).unref();
    }, (err: Error) => {
      process.stderr.write(`sluice: shutdown failed: ${err.message}\n`);
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => { if (!stopping) void running.reload(); });
}

if (require.main === module) void main();
