// Helpers for the in-flight limit suites: what a gateway's queue and lease
// sets hold, and streams that a test cuts off at a chosen point.
import { request, type Agent } from 'node:http';
import type Redis from 'ioredis';
import type { TestGateway } from './gateway';

/** Requests waiting for a slot in this gateway (all priorities). */
export async function queued(gw: TestGateway): Promise<number> {
  const gauge = gw.gateway.services.metrics!.getSingleMetric('sluice_concurrency_queue_length');
  if (gauge === undefined) return 0;
  return (await gauge.get()).values.reduce((sum, v) => sum + v.value, 0);
}

export { until } from './wait';

/** Leases in a lease set (expired ones included: with a long leaseMs, any left is a leak). */
export const leases = (redis: Redis, key: string): Promise<number> => redis.zcard(key);

export interface Streamed { status: number; events: number; body: string; headers: Record<string, string | string[] | undefined> }

/**
 * A streamed chat request with its own x-request-id; `abortAfter` events (0:
 * as soon as the head arrives) closes the connection; `abort` closes it on demand.
 * `agent`: false for a connection of its own; `port`: the client's end of the connection.
 */
export function streamChat(url: string, key: string, body: Record<string, unknown>, requestId: string, abortAfter?: number, agent?: Agent | false): { done: Promise<Streamed>; abort(): void; port: Promise<number> } {
  const payload = JSON.stringify({ stream: true, messages: [{ role: 'user', content: 'hi' }], ...body });
  let abort = (): void => undefined;
  let connected = (_port: number): void => undefined;
  const port = new Promise<number>((resolve) => { connected = resolve; });
  const done = new Promise<Streamed>((resolve) => {
    const out: Streamed = { status: 0, events: 0, body: '', headers: {} };
    const req = request(`${url}/v1/chat/completions`, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), authorization: `Bearer ${key}`, 'x-request-id': requestId },
    }, (res) => {
      out.status = res.statusCode ?? 0;
      out.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        out.body += chunk;
        out.events = out.body.split('\n\n').filter((b) => b.startsWith('data: ')).length;
        if (abortAfter !== undefined && out.events >= abortAfter) req.destroy();
      });
      res.on('end', () => resolve(out));
      res.on('close', () => resolve(out));
      if (abortAfter === 0) req.destroy();
    });
    abort = () => { req.destroy(); resolve(out); };
    req.on('error', () => resolve(out));
    req.on('socket', (socket) => {
      if (socket.localPort !== undefined) connected(socket.localPort);
      else socket.once('connect', () => connected(socket.localPort!));
    });
    req.end(payload);
  });
  return { done, abort: () => abort(), port };
}
