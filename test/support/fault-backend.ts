// An OpenAI-format backend that misbehaves on command, for fleet and failover
// suites. Each request takes the next fault from a script (the last one
// repeats), so a test says "500 once, then healthy" as ['status-500', 'ok'].
// A model may have a script of its own (`scriptModel`): one backend serving
// several models, one of them in trouble.
// Every answer's text names the backend (`<name>-0 <name>-1 ...`), so a test
// can tell which backend answered and which words a client got from each.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startJsonServer } from './json-server';

export type Fault =
  | { kind: 'ok'; firstEventMs?: number; gapMs?: number; words?: number; noDone?: boolean; malformed?: boolean }
  | { kind: 'status'; status: number; retryAfter?: string; code?: string; type?: string }
  | { kind: 'reset' } // the connection dies before any answer
  | { kind: 'silent' } // accepts the request and never answers
  | { kind: 'hang-up'; afterMs: number } // accepts the request, says nothing for afterMs, then closes the connection
  | { kind: 'endless-error'; status: number; chunkBytes: number } // an error status whose body never ends (a chunk every 20 ms)
  | { kind: 'cut'; after: number } // streams `after` words, then the connection dies
  | { kind: 'stall'; after: number } // streams `after` words, then says nothing more
  | { kind: 'error-event' }; // the stream's first event is an error

export interface FaultBackend {
  name: string;
  /** The base URL with /v1, as an upstream's url. */
  base: string;
  port: number;
  /** Request bodies in arrival order. */
  bodies: any[];
  /** When each request arrived (Date.now()). */
  arrivals: number[];
  /** Sets the script from the next request on, for every model without a script of its own. */
  script(...faults: Fault[]): void;
  /** Sets one model's own script (the model as the backend is asked for it). */
  scriptModel(model: string, ...faults: Fault[]): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const ok: Fault = { kind: 'ok' };
export const status = (code: number, extra: Omit<Extract<Fault, { kind: 'status' }>, 'kind' | 'status'> = {}): Fault => ({ kind: 'status', status: code, ...extra });

export async function startFaultBackend(name: string, port = 0, ...faults: Fault[]): Promise<FaultBackend> {
  let plan: Fault[] = faults.length > 0 ? faults : [ok];
  const plans = new Map<string, Fault[]>();
  const backend: FaultBackend = {
    name, base: '', port: 0, bodies: [], arrivals: [],
    script: (...next) => { plan = next.length > 0 ? next : [ok]; },
    scriptModel: (model, ...next) => { plans.set(model, next.length > 0 ? next : [ok]); },
    close: async () => undefined,
  };
  const server = await startJsonServer((req, res, body = {}) => {
    // An active health check (GET, any path): the backend is up.
    if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    backend.bodies.push(body);
    backend.arrivals.push(Date.now());
    const own = plans.get(body?.model) ?? plan;
    const fault = own.length > 1 ? own.shift()! : own[0];
    void answer(name, req, res, body, fault);
  }, port);
  backend.port = server.port;
  backend.base = server.base;
  backend.close = server.close;
  return backend;
}

const chunk = (name: string, choice: object, usage?: object) =>
  `data: ${JSON.stringify({ id: `chatcmpl-${name}`, object: 'chat.completion.chunk', created: 1700000000, model: name, choices: [choice], ...(usage ? { usage } : {}) })}\n\n`;

async function answer(name: string, req: IncomingMessage, res: ServerResponse, body: any, fault: Fault): Promise<void> {
  switch (fault.kind) {
    case 'reset': return void req.socket.destroy();
    case 'silent': return;
    case 'hang-up': {
      const timer = setTimeout(() => req.socket.destroy(), fault.afterMs);
      return void res.on('close', () => clearTimeout(timer));
    }
    case 'endless-error': {
      res.writeHead(fault.status, { 'content-type': 'application/json' });
      res.write(`{"error":{"message":"${name} is failing","padding":"`);
      const drip = setInterval(() => res.write('x'.repeat(fault.chunkBytes)), 20);
      return void res.on('close', () => clearInterval(drip));
    }
    case 'status': {
      const error = JSON.stringify({ error: { message: `${name} refused the request (${fault.status})`, type: fault.type ?? (fault.status === 429 ? 'rate_limit_error' : fault.status >= 500 ? 'server_error' : 'invalid_request_error'), param: null, code: fault.code ?? null } });
      res.writeHead(fault.status, { 'content-type': 'application/json', ...(fault.retryAfter ? { 'retry-after': fault.retryAfter } : {}) });
      return void res.end(error);
    }
    case 'error-event':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void res.end(`data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })}\n\n`);
    default:
  }
  const words = Array.from({ length: fault.kind === 'ok' ? fault.words ?? 3 : 6 }, (_, i) => `${name}-${i} `);
  const usage = { prompt_tokens: 7, completion_tokens: words.length, total_tokens: 7 + words.length };
  if (!body.stream) {
    const text = JSON.stringify({ id: `chatcmpl-${name}`, object: 'chat.completion', created: 1700000000, model: name, choices: [{ index: 0, message: { role: 'assistant', content: words.join('') }, finish_reason: 'stop' }], usage });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    return void res.end(text);
  }
  const o = fault.kind === 'ok' ? fault : undefined;
  const gap = o?.gapMs ?? 5;
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  if (o?.firstEventMs) await sleep(o.firstEventMs);
  for (let i = 0; i < words.length; i++) {
    if (res.destroyed) return;
    if (fault.kind === 'cut' && i === fault.after) return void req.socket.destroy();
    if (fault.kind === 'stall' && i === fault.after) return;
    if (o?.malformed && i === 1) res.write('data: {"choices": [ not json\n\n');
    res.write(chunk(name, { index: 0, delta: i === 0 ? { role: 'assistant', content: words[i] } : { content: words[i] }, finish_reason: null }));
    if (gap > 0) await sleep(gap);
  }
  if (res.destroyed) return;
  res.write(chunk(name, { index: 0, delta: {}, finish_reason: 'stop' }));
  res.write(`data: ${JSON.stringify({ id: `chatcmpl-${name}`, object: 'chat.completion.chunk', created: 1700000000, model: name, choices: [], usage })}\n\n`);
  res.end(o?.noDone ? undefined : 'data: [DONE]\n\n');
}
