// The process: load the config, build the gateway, listen; reload the config
// on SIGHUP; drain and exit 0 on SIGTERM/SIGINT. Every listener is bound
// before anything says "listening": a start that fails says why in one line
// on stderr, closes what it opened and exits 1.
import type { Server } from 'node:http';
import { createPublicServer } from './http-server';
import { ConfigError, defaultConfigPath, loadConfigFile } from './config/load';
import { createLogger, type Logger } from './log';
import { createGateway, gatewayConfigCheck, warnIfMetricsUncounted, type Gateway } from './gateway';
import { closeDemoBackends } from './runtime';
import { startMetricsServer, type MetricsServer } from './metrics/server';
import { drain } from './drain';
import { createReloader } from './reload';
import { environmentProblems, logLevelFromEnv } from './env';
import { ListenError, listen, listeningUrl } from './listen';

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

const closeServer = (server: Server) => new Promise<void>((resolve) => {
  server.close(() => resolve());
  server.closeAllConnections();
});

export async function startGateway(file = defaultConfigPath(), logger: Logger = createLogger()): Promise<RunningGateway> {
  const loaded = loadConfigFile(file, process.env, gatewayConfigCheck());
  const gateway = await createGateway(loaded, logger).catch(async (err: unknown) => {
    await closeDemoBackends(); // the demo backends it bound before failing
    throw err;
  });
  const server = createPublicServer(gateway.app, loaded.config.server);
  let metrics: MetricsServer | undefined;
  try {
    const { host, port } = loaded.config.server;
    await listen(server, port, host, 'the public API (server.host, server.port)');
    metrics = await startMetricsListener(gateway, loaded.config.server.metrics);
  } catch (err) {
    if (server.listening) await closeServer(server);
    await gateway.close();
    await closeDemoBackends();
    throw err;
  }
  const url = listeningUrl(server);
  // The pid is the process to signal: SIGHUP reloads, SIGTERM drains (npm or a shell may sit above it).
  logger.info({ url, config: loaded.file, pid: process.pid }, 'listening');
  if (metrics) logger.info({ url: `${metrics.url}/metrics`, token: loaded.config.server.metrics.token !== undefined }, 'metrics listening');
  warnIfMetricsUncounted(metrics !== undefined, loaded.config, logger);

  const stop = async (): Promise<void> => {
    await drain(server, gateway.state, gateway.state.runtime.config.server.drainSeconds * 1000, logger);
    await gateway.close();
    await metrics?.close();
    await closeDemoBackends();
  };
  return { gateway, server, url, metrics, stop, reload: createReloader(gateway, loaded.file, logger, metrics !== undefined) };
}

/** Port 0 in the config turns the metrics listener off. Host, port and token are read once, at start. */
async function startMetricsListener(gateway: Gateway, options: { host: string; port: number; token?: string }): Promise<MetricsServer | undefined> {
  const registry = gateway.services.metrics;
  if (options.port === 0 || registry === undefined) return undefined;
  return startMetricsServer(registry, options);
}

/** Why the process cannot start, for stderr: a config's problems one per line, anything else in one line. */
function startFailure(err: unknown): string {
  if (err instanceof ConfigError || err instanceof ListenError) return err.message;
  return `cannot start: ${(err as Error).message}`;
}

function fail(lines: string[]): never {
  process.stderr.write(lines.map((line) => `sluice: ${line}\n`).join(''));
  process.exit(1);
}

/** Drains, then exits 0 (1 if closing failed). */
function stopAndExit(running: RunningGateway, signal: string, logger: Logger): void {
  logger.info({ signal }, 'shutting down');
  running.stop().then(() => {
    logger.info('stopped');
    logger.flush();
    setTimeout(() => process.exit(0), 50).unref();
  }, (err: Error) => {
    process.stderr.write(`sluice: shutdown failed: ${err.message}\n`);
    process.exit(1);
  });
}

export async function main(): Promise<void> {
  const envProblems = environmentProblems(process.env);
  if (envProblems.length > 0) fail(envProblems);
  const logger = createLogger(logLevelFromEnv(process.env));
  // The handlers come first, so a signal sent the moment "listening" appears
  // finds them (an unhandled SIGHUP would end the process). A signal during
  // the start takes effect once it is done.
  let running: RunningGateway | undefined;
  let stopSignal: string | undefined;
  let reloadPending = false;
  const shutdown = (signal: string) => {
    if (stopSignal !== undefined) return;
    stopSignal = signal;
    if (running) stopAndExit(running, signal, logger);
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => {
    if (!running) reloadPending = true;
    else if (stopSignal === undefined) void running.reload();
  });
  try {
    running = await startGateway(defaultConfigPath(), logger);
  } catch (err) {
    fail([startFailure(err)]);
  }
  if (stopSignal !== undefined) stopAndExit(running, stopSignal, logger);
  else if (reloadPending) void running.reload();
}

if (require.main === module) void main();
