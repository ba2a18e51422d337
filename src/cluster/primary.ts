// The primary (server.workers above 1): forks the workers, which share one
// listening socket (node:cluster hands each new connection to the next worker
// in turn), serves the machine's metrics, and takes the operator's signals for
// all of them:
//   SIGHUP   reads and checks the file once; a broken file is refused here,
//            once, and no worker changes; a good one goes to every worker.
//   SIGTERM  every worker drains (server.drainSeconds), and the primary exits
//            once they all have.
//   a crash  a worker that exits on its own is logged and started again (at
//            once, then backing off while it keeps crashing); the connections
//            it held close with it, so their clients see an error, not a hang.
// Plugins keep what must be exact across workers here (setUpPrimary).
import cluster, { type Worker } from 'node:cluster';
import { join } from 'node:path';
import { Counter, Gauge } from 'prom-client';
import type { Logger } from 'pino';
import { ConfigError, parseConfigText, readConfigText, type LoadedConfig } from '../config/load';
import { gatewayConfigCheck, primaryPlugins, startAdminListener, warnAboutConfig } from '../gateway';
import { keepKeysForWorkers } from '../keys/primary-keys';
import { serveSpend } from '../spend';
import type { AdminServer } from '../admin/server';
import { createMetricsRegistry } from '../metrics/registry';
import { startMetricsServer, type MetricsServer } from '../metrics/server';
import type { PrimaryLink } from '../contract/plugin';
import { reloadCounter, reportReloaded, reportReloadFailed, serialized } from '../reload';
import { IpcPeer, workerPort, type IpcHandler } from './ipc';
import { MachineMetrics } from './metrics';
import { CHANNELS, WorkerStartError, type ConfigText, type Started } from './protocol';

export interface PrimaryOptions {
  /** The config as checked at start, and the very text it came from. */
  loaded: LoadedConfig;
  text: string;
  workers: number;
  logger: Logger;
}

interface Slot {
  worker: Worker;
  peer: IpcPeer;
  started: boolean;
  forkedAt: number;
  exited: Promise<void>;
}

const START_TIMEOUT_MS = 30_000;
const RELOAD_TIMEOUT_MS = 30_000;
/** A worker that lived less than this before crashing counts as crashing in a loop. */
const QUICK_CRASH_MS = 10_000;
const MAX_RESTART_DELAY_MS = 10_000;
/** After the drain deadline, how long a worker has to exit before it is killed. */
const EXIT_GRACE_MS = 5_000;

export async function startPrimary({ loaded, text, workers: count, logger }: PrimaryOptions) {
  const handlers = new Map<string, IpcHandler>();
  const exitListeners: Array<(worker: number) => void> = [];
  const link: PrimaryLink = {
    handle(channel, handler) {
      if (handlers.has(channel)) throw new Error(`IPC channel ${channel} is handled twice`);
      handlers.set(channel, handler);
    },
    onWorkerExit: (listener) => void exitListeners.push(listener),
  };
  const setUpPlugins = primaryPlugins(link);
  setUpPlugins(loaded);
  const check = gatewayConfigCheck();
  let current: ConfigText = { text, file: loaded.file };
  let config = loaded.config;
  // The runtime keys, before any worker asks for them.
  const keys = keepKeysForWorkers(link, logger);
  // The spend records without Redis, exact across the workers; with Redis, what the admin listener reads there.
  const spend = serveSpend(link, () => keys.services.redis);
  spend.apply(config);
  try {
    await keys.apply(loaded);
  } catch (err) {
    await keys.close();
    throw err;
  }

  const live = new Map<number, Slot>();
  const running = () => [...live.values()].filter((s) => s.started);
  const registry = createMetricsRegistry();
  const reloads = reloadCounter(registry);
  const restarts = new Counter({ name: 'sluice_worker_restarts_total', help: 'Workers that exited on their own and were started again.', registers: [registry] });
  new Gauge({ name: 'sluice_workers', help: 'Worker processes serving requests.', registers: [registry], collect() { this.set(running().length); } });
  const machine = new MachineMetrics(registry, () => running().map((s) => ({ id: s.worker.id, peer: s.peer })));

  let stopping = false;
  const timers = new Set<NodeJS.Timeout>();
  let quickCrashes = 0;

  cluster.setupPrimary({ exec: join(__dirname, 'worker.js') });

  /** Forks a worker and starts its gateway; resolves once it listens. */
  const fork = (): { slot: Slot; ready: Promise<Started> } => {
    const worker = cluster.fork();
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const slot: Slot = { worker, peer: new IpcPeer(workerPort(worker), handlers), started: false, forkedAt: Date.now(), exited };
    live.set(worker.id, slot);
    worker.once('exit', (code: number | null, signal: string | null) => onExit(slot, code, signal));
    const sent = current;
    const ready = slot.peer.request<Started>(CHANNELS.start, sent, START_TIMEOUT_MS).then(async (started) => {
      // A reload that finished while it was starting: catch up before it counts as running.
      if (current !== sent) await slot.peer.request(CHANNELS.reload, current, RELOAD_TIMEOUT_MS);
      slot.started = true;
      return started;
    }, (err: Error) => { throw new WorkerStartError(err.message); });
    return { slot, ready };
  };

  const onExit = (slot: Slot, code: number | null, signal: string | null): void => {
    const { worker } = slot;
    live.delete(worker.id);
    slot.peer.close(`worker ${worker.id} exited`);
    void machine.retire(worker.id);
    for (const listener of exitListeners) {
      try { listener(worker.id); } catch (err) { logger.error({ worker: worker.id, err: (err as Error).message }, 'a worker-exit listener failed'); }
    }
    if (stopping || !slot.started) return; // a stop, or a start that failed (its caller decides)
    logger.error({ worker: worker.id, workerPid: worker.process.pid, code, signal }, 'worker exited; starting another');
    restarts.inc();
    restart(Date.now() - slot.forkedAt);
  };

  const restart = (livedMs: number): void => {
    quickCrashes = livedMs < QUICK_CRASH_MS ? quickCrashes + 1 : 0;
    const delay = quickCrashes === 0 ? 0 : Math.min(100 * 2 ** (quickCrashes - 1), MAX_RESTART_DELAY_MS);
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (stopping) return;
      const { slot, ready } = fork();
      ready.then(() => logger.info({ worker: slot.worker.id, workerPid: slot.worker.process.pid }, 'worker started'), (err: Error) => {
        logger.error({ worker: slot.worker.id, err: err.message }, 'worker could not start');
        slot.worker.process.kill('SIGKILL');
        restart(0);
      });
    }, delay);
    timers.add(timer);
  };

  const killAll = async (): Promise<void> => {
    const slots = [...live.values()];
    for (const s of slots) s.worker.process.kill('SIGKILL');
    await Promise.all(slots.map((s) => s.exited));
  };

  // Start: every worker listening, then the metrics listener; any failure undoes it all.
  let first: Started;
  try {
    const forks = Array.from({ length: count }, fork);
    [first] = await Promise.all(forks.map((f) => f.ready));
    for (const { slot } of forks) logger.info({ worker: slot.worker.id, workerPid: slot.worker.process.pid }, 'worker started');
  } catch (err) {
    stopping = true;
    await killAll();
    await keys.close();
    throw err;
  }
  let metrics: MetricsServer | undefined;
  let admin: AdminServer | undefined;
  const m = config.server.metrics;
  try {
    if (m.port !== 0) metrics = await startMetricsServer(machine, m);
    admin = await startAdminListener(keys.host, () => ({ config, file: current.file }), { get redis() { return keys.services.redis; }, spend }, logger);
  } catch (err) {
    stopping = true;
    await metrics?.close();
    await killAll();
    await keys.close();
    throw err;
  }
  logger.info({ url: first.url, config: current.file, pid: process.pid, workers: count }, 'listening');
  if (metrics) logger.info({ url: `${metrics.url}/metrics`, token: m.token !== undefined }, 'metrics listening');
  if (admin) logger.info({ url: `${admin.url}/admin/keys` }, 'admin listening');
  warnAboutConfig(metrics !== undefined, config, logger);

  const reload = serialized(async () => {
    const { file } = current;
    let next: ConfigText;
    let nextConfig: LoadedConfig['config'];
    try {
      next = { text: readConfigText(file), file };
      nextConfig = parseConfigText(next.text, file, process.env, check);
      await keys.apply({ config: nextConfig, file });
    } catch (err) {
      reportReloadFailed(reloads, logger, file, err);
      return false;
    }
    setUpPlugins({ config: nextConfig, file });
    spend.apply(nextConfig);
    const targets = running();
    const results = await Promise.allSettled(targets.map((s) => s.peer.request(CHANNELS.reload, next, RELOAD_TIMEOUT_MS)));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`worker ${targets[i].worker.id}: ${(r.reason as Error).message}`] : []));
    if (failed.length > 0) {
      // Checked here, so only what a worker's build hits (a plugin's create failing) lands here.
      reportReloadFailed(reloads, logger, file, new ConfigError(file, failed), { workers: targets.length });
      return false;
    }
    const before = config;
    current = next;
    config = nextConfig;
    reportReloaded(reloads, logger, file, before, config, metrics !== undefined, { workers: targets.length });
    return true;
  });

  const stop = async (): Promise<void> => {
    stopping = true;
    await admin?.close();
    for (const t of timers) clearTimeout(t);
    const slots = [...live.values()];
    for (const s of slots) {
      if (s.started) s.peer.request(CHANNELS.stop, null).catch(() => s.worker.process.kill('SIGKILL'));
      else s.worker.process.kill('SIGKILL');
    }
    const deadline = setTimeout(() => { for (const s of slots) s.worker.process.kill('SIGKILL'); }, config.server.drainSeconds * 1000 + EXIT_GRACE_MS);
    await Promise.all(slots.map((s) => s.exited));
    clearTimeout(deadline);
    await metrics?.close();
    await keys.close();
  };

  return { reload, stop };
}
