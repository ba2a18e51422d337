// Drain on shutdown: readiness off, no new connections, in-flight requests
// and streams run on until they end or the deadline passes; a stream still
// open then ends with a shutting_down error event, never silently.
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { GatewayState } from './app';
import { GatewayError } from './contract/errors';

const POLL_MS = 50;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function drain(server: Server, state: GatewayState, deadlineMs: number, logger: Logger): Promise<void> {
  state.ready = false;
  server.close();
  server.closeIdleConnections();
  logger.info({ inflight: state.active.size, deadlineMs }, 'draining');
  const until = Date.now() + deadlineMs;
  while (state.active.size > 0 && Date.now() < until) {
    await sleep(POLL_MS);
    server.closeIdleConnections(); // keep-alive connections whose last response just ended
  }
  if (state.active.size > 0) {
    logger.warn({ open: state.active.size }, 'drain deadline reached: ending open requests');
    const cut = new GatewayError('shutting_down', 'The gateway is shutting down and ended this response at its drain deadline. Retry the request.');
    for (const ctx of state.active) ctx.forwarding.call?.interrupt(cut);
    await sleep(POLL_MS); // let the error events reach the sockets
  }
  server.closeAllConnections();
}
