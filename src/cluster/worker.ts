// One worker (server.workers above 1): a whole gateway on the listening socket
// the workers share, driven by the primary. It takes its config from the
// primary, not the file, so every worker runs what the primary checked. The
// operator signals the primary only: a worker ignores SIGINT, SIGTERM and
// SIGHUP (a Ctrl-C reaches the whole process group), and drains and exits
// when the primary says so or when the primary is gone.
import cluster from 'node:cluster';
import { parseConfigText } from '../config/load';
import { gatewayConfigCheck } from '../gateway';
import { createLogger } from '../plumbing/log';
import { logLevelFromEnv } from '../plumbing/env';
import type { WorkerLink } from '../contract/plugin';
import { startFailure, startGateway, type RunningGateway } from '../server';
import { IpcPeer, processPort, type IpcHandler } from './ipc';
import { CHANNELS, type ConfigText, type Started } from './protocol';

export function runWorker(): void {
  const logger = createLogger(logLevelFromEnv(process.env), { pid: process.pid });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);

  const handlers = new Map<string, IpcHandler>();
  const primary = new IpcPeer(processPort(), handlers);
  const link: WorkerLink = { worker: cluster.worker!.id, request: (channel, body, timeoutMs) => primary.request(channel, body, timeoutMs) };
  let running: RunningGateway | undefined;
  let stopping: Promise<void> | undefined;

  const stop = (): Promise<void> => (stopping ??= (async () => {
    let code = 0;
    try {
      await running?.stop();
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'worker shutdown failed');
      code = 1;
    }
    logger.flush();
    process.exitCode = code;
    setTimeout(() => process.exit(code), 50).unref();
  })());

  handlers.set(CHANNELS.start, async (body): Promise<Started> => {
    const { text, file } = body as ConfigText;
    try {
      const loaded = { config: parseConfigText(text, file, process.env, gatewayConfigCheck()), file };
      running = await startGateway(loaded, logger, { metricsListener: false, cluster: link });
      return { url: running.url };
    } catch (err) {
      throw new Error(startFailure(err));
    }
  });
  handlers.set(CHANNELS.reload, async (body) => {
    const { text, file } = body as ConfigText;
    const gateway = running!.gateway;
    await gateway.swap({ config: parseConfigText(text, file, process.env, gateway.check), file });
    return true;
  });
  handlers.set(CHANNELS.stop, () => {
    void stop();
    return true;
  });
  handlers.set(CHANNELS.metrics, () => running?.gateway.services.metrics?.getMetricsAsJSON() ?? []);

  // The primary is gone (killed): nothing will route new connections here; finish what is in flight.
  process.on('disconnect', () => {
    primary.close('the primary is gone');
    void stop();
  });
}

if (require.main === module) runWorker();
