// The process: load the config, build the gateway, listen; reload the config
// on SIGHUP; drain and exit 0 on SIGTERM/SIGINT. Every listener is bound
// before anything says "listening": a start that fails says why in one line
// on stderr, closes what it opened and exits 1. With server.workers above 1
// this process is the primary of that many workers (src/cluster/primary.ts),
// and the signals act on all of them.
import { availableParallelism } from 'node:os';
import type { Server } from 'node:http';
import { createPublicServer } from './plumbing/http-server';
import { ConfigError, defaultConfigPath, loadConfigFile, parseConfigText, readConfigText, type LoadedConfig } from './config/load';
import type { GatewayConfig } from './config/schema';
import { createLogger, type Logger } from './plumbing/log';
import { createGateway, gatewayConfigCheck, startAdminListener, warnAboutConfig, type Gateway } from './gateway';
import type { AdminServer } from './admin/server';
import type { WorkerLink } from './contract/plugin';
import { closeDemoBackends } from './runtime';
import { startMetricsServer, type MetricsServer } from './metrics/server';
import { drain } from './drain';
import { createReloader } from './reload';
import { environmentProblems, logLevelFromEnv } from './plumbing/env';
import { closeNow, ListenError, listen, listeningUrl } from './plumbing/listen';
import { WorkerStartError } from './cluster/protocol';
import { KeysFileError } from './keys/file-store';

/** What the signals act on: one gateway, or the primary of several workers. */
export interface Running {
  /** Drains and closes everything; resolves when the process may exit. */
  stop(): Promise<void>;
  /** Re-reads the config file (what SIGHUP does); false if it was rejected. */
  reload(): Promise<boolean>;
}

export interface RunningGateway extends Running {
  gateway: Gateway;
  server: Server;
  url: string;
  /** The metrics listener; undefined when server.metrics.port is 0 or in a worker. */
  metrics?: MetricsServer;
  /** The admin listener; undefined without admin.port or in a worker (the primary runs it). */
  admin?: AdminServer;
}

export interface StartOptions {
  /** False in a worker: the primary serves the metrics of every worker. */
  metricsListener?: boolean;
  /** The link to the primary, in a worker. */
  cluster?: WorkerLink;
}

/** Builds the gateway from a loaded config and binds its listeners; says nothing (main() and the primary announce it). */
export async function startGateway(source: string | LoadedConfig = defaultConfigPath(), logger: Logger = createLogger(), options: StartOptions = {}): Promise<RunningGateway> {
  const loaded = typeof source === 'string' ? loadConfigFile(source, process.env, gatewayConfigCheck()) : source;
  const gateway = await createGateway(loaded, logger, [], options.cluster).catch(async (err: unknown) => {
    await closeDemoBackends(); // the demo backends it bound before failing
    throw err;
  });
  const server = createPublicServer(gateway.app, loaded.config.server);
  let metrics: MetricsServer | undefined;
  let admin: AdminServer | undefined;
  try {
    const { host, port } = loaded.config.server;
    await listen(server, port, host, 'the public API (server.host, server.port)');
    if (options.metricsListener !== false) metrics = await startMetricsListener(gateway, loaded.config.server.metrics);
    const { state, keyHost } = gateway;
    if (keyHost !== undefined) admin = await startAdminListener(keyHost, () => state.runtime, gateway.services, logger);
  } catch (err) {
    if (server.listening) await closeNow(server);
    await metrics?.close();
    await gateway.close();
    await closeDemoBackends();
    throw err;
  }
  const stop = async (): Promise<void> => {
    await admin?.close();
    await drain(server, gateway.state, gateway.state.runtime.config.server.drainSeconds * 1000, logger);
    await gateway.close();
    await metrics?.close();
    await closeDemoBackends();
  };
  // A worker's reloads come from the primary, which reads the file and counts them.
  const reload = options.cluster ? () => Promise.resolve(false) : createReloader(gateway, loaded.file, logger, metrics !== undefined);
  return { gateway, server, url: listeningUrl(server), metrics, admin, stop, reload };
}

/** One process: the gateway itself, announced. */
async function startSingle(loaded: LoadedConfig, logger: Logger): Promise<Running> {
  const running = await startGateway(loaded, logger);
  const { metrics, admin } = running;
  // The pid is the process to signal: SIGHUP reloads, SIGTERM drains (npm or a shell may sit above it).
  logger.info({ url: running.url, config: loaded.file, pid: process.pid }, 'listening');
  if (metrics) logger.info({ url: `${metrics.url}/metrics`, token: loaded.config.server.metrics.token !== undefined }, 'metrics listening');
  if (admin) logger.info({ url: `${admin.url}/admin/keys` }, 'admin listening');
  warnAboutConfig(metrics !== undefined, loaded.config, logger);
  return running;
}

/** server.workers as a number: `auto` is one per CPU this process may run on. */
export const workerCount = (workers: GatewayConfig['server']['workers']): number => (workers === 'auto' ? availableParallelism() : workers);

/** Port 0 in the config turns the metrics listener off. Host, port and token are read once, at start. */
async function startMetricsListener(gateway: Gateway, options: { host: string; port: number; token?: string }): Promise<MetricsServer | undefined> {
  const registry = gateway.services.metrics;
  if (options.port === 0 || registry === undefined) return undefined;
  return startMetricsServer(registry, options);
}

/** Why the process cannot start, for stderr: a config's problems one per line, anything else in one line. */
export function startFailure(err: unknown): string {
  if (err instanceof ConfigError || err instanceof ListenError || err instanceof WorkerStartError || err instanceof KeysFileError) return err.message;
  return `cannot start: ${(err as Error).message}`;
}

function fail(lines: string[]): never {
  process.stderr.write(lines.map((line) => `sluice: ${line}\n`).join(''));
  process.exit(1);
}

/** Drains, then exits 0 (1 if closing failed). */
function stopAndExit(running: Running, signal: string, logger: Logger): void {
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
  let running: Running | undefined;
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
  let started: Running;
  try {
    // Read once: with workers, the primary hands this very text to each of them.
    const file = defaultConfigPath();
    const text = readConfigText(file);
    const loaded: LoadedConfig = { config: parseConfigText(text, file, process.env, gatewayConfigCheck()), file };
    const workers = workerCount(loaded.config.server.workers);
    started = workers > 1
      ? await import('./cluster/primary').then((m) => m.startPrimary({ loaded, text, workers, logger }))
      : await startSingle(loaded, logger);
  } catch (err) {
    fail([startFailure(err)]);
  }
  running = started;
  if (stopSignal !== undefined) stopAndExit(running, stopSignal, logger);
  else if (reloadPending) void running.reload();
}

if (require.main === module) void main();
