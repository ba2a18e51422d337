// A backend that counts the streams it has open at once, per group (the
// x-request-id up to its first ":"; the gateway passes the client's id on),
// and records the most it ever had. Behaviour by the model it is sent:
//   stream-*  a stream of `events` events `gapMs` apart (JSON: one answer after the same time)
//   hold-*    the head and a first event (JSON: nothing), then waits for release()
//   hang-*    the head and a first event, then silence until the gateway gives up
// Usage is prompt 11 plus max_tokens (or `events`) completion tokens.
import { startJsonServer } from './json-server';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface GatedBackend {
  url: string;
  base: string;
  /** Request ids in the order they arrived. */
  seen: string[];
  /** Most streams (or answers) open at once, per group. */
  max: Map<string, number>;
  open(group?: string): number;
  /** Requests of hold-* models waiting for release(). */
  readonly holding: number;
  /** Lets the `n` oldest held requests finish (all when n is left out). */
  release(n?: number): void;
  /** Resolves once `count` requests of the group are open (or holding, for hold-*). */
  waitForOpen(count: number, group?: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ALL = '*';

export async function startGatedBackend(options: { events?: number; gapMs?: number } = {}): Promise<GatedBackend> {
  const { events = 5, gapMs = 20 } = options;
  const open = new Map<string, number>();
  const max = new Map<string, number>();
  const held: Array<() => void> = [];
  const watchers = new Set<() => void>();
  const bump = (group: string, by: number): void => {
    for (const g of [group, ALL]) {
      const n = (open.get(g) ?? 0) + by;
      open.set(g, n);
      if (n > (max.get(g) ?? 0)) max.set(g, n);
    }
    for (const w of watchers) w();
  };

  async function handle(req: IncomingMessage, res: ServerResponse, body: any): Promise<void> {
    const id = String(req.headers['x-request-id'] ?? '');
    const group = id.includes(':') ? id.slice(0, id.indexOf(':')) : id;
    backend.seen.push(id);
    const model: string = body?.model ?? '';
    const completion = Number.isInteger(body?.max_tokens) ? body.max_tokens : events;
    const usage = { prompt_tokens: 11, completion_tokens: completion, total_tokens: 11 + completion };
    let closed = false;
    bump(group, 1);
    // Open until the client is gone: at the end of its side of the connection, which this process reads
    // before anything after it on another connection (a 'close' comes a turn of the loop later), or at the close.
    const socket = req.socket;
    const gone = (): void => {
      if (closed) return;
      closed = true;
      bump(group, -1);
      socket.off('end', gone);
      socket.off('error', gone);
    };
    socket.once('end', gone);
    socket.once('error', gone);
    res.on('close', gone);
    const chunk = (i: number) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content: 'w' } : { content: ' w' }, finish_reason: null }] })}\n\n`;
    const stream = body?.stream === true;
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk(0));
    }
    if (model.startsWith('hang-')) return;
    if (model.startsWith('hold-')) {
      await new Promise<void>((resolve) => { held.push(resolve); for (const w of watchers) w(); });
    } else {
      for (let i = 1; i < events && !closed; i++) {
        await sleep(gapMs);
        if (stream && !closed) res.write(chunk(i));
      }
    }
    if (closed) return;
    if (!stream) {
      const text = JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: 'w' }, finish_reason: 'stop' }], usage });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      return void res.end(text);
    }
    res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model, choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  const server = await startJsonServer((req, res, body) => void handle(req, res, body));
  const backend: GatedBackend = {
    url: server.url,
    base: server.base,
    seen: [],
    max,
    open: (group = ALL) => open.get(group) ?? 0,
    get holding() { return held.length; },
    release(n = held.length) {
      for (const resolve of held.splice(0, n)) resolve();
    },
    waitForOpen(count, group = ALL, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if ((open.get(group) ?? 0) >= count) { watchers.delete(check); clearTimeout(timer); resolve(); }
        };
        const timer = setTimeout(() => { watchers.delete(check); reject(new Error(`backend: ${open.get(group) ?? 0} of ${count} requests of "${group}" open after ${timeoutMs} ms`)); }, timeoutMs);
        watchers.add(check);
        check();
      });
    },
    close: () => { for (const r of held.splice(0)) r(); return server.close(); },
  };
  return backend;
}
