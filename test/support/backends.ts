// Real HTTP backends on loopback (node:http, port 0) for end-to-end tests.
// Behaviour is chosen by the model name the gateway sends upstream, so one
// backend serves every scenario:
//   ok-*        normal answer (JSON, or SSE when stream is true)
//   nousage-*   like ok-, but never reports usage
//   slow-*      waits `slowMs` before the response head
//   break-*     streams two events, then destroys the socket
//   trunc-*     streams two events, then ends without [DONE]
//   linger-*    a normal stream that stays open after [DONE]
//   fail-*      sends two events and an error event in one write, then ends without [DONE]
//   status-NNN  answers HTTP NNN with an error body
//   garbage-*   answers 200 with a body that is not JSON
//   reset-*     destroys the connection before any answer
// SSE answers send `events` content events `gapMs` apart; every event's send
// time is recorded so tests can compare it with arrival at the client.
import { startRecordingServer, type RecordedRequest } from './json-server';
import type { IncomingMessage, ServerResponse } from 'node:http';

export type { RecordedRequest };

export interface BackendOptions {
  format: 'openai' | 'native';
  events?: number;
  gapMs?: number;
  slowMs?: number;
}

export interface Backend {
  url: string;
  /** Base URL with /v1, as an upstream's `url`. */
  base: string;
  requests: RecordedRequest[];
  /** performance.now()-style wall times (Date.now()) at which each SSE event left, per request. */
  sentAt: number[][];
  /** Event data strings sent per SSE request, parallel to `sentAt`. */
  sentData: string[][];
  /** Exact body text of each JSON answer, in order. */
  replies: string[];
  /** Requests whose connection the gateway closed before the answer ended. */
  aborted: number;
  options: BackendOptions;
  close(): Promise<void>;
}

/** Streams this backend has begun sending (a first event out) since it had `since` streams: the event a test waits on before it acts mid-stream. */
export const streamsUnderWay = (backend: Pick<Backend, 'sentAt'>, since = 0): number => backend.sentAt.slice(since).filter((s) => s.length > 0).length;

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa'];

function send(res: ServerResponse, status: number, body: unknown, replies?: string[]): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  replies?.push(text);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startBackend(options: BackendOptions): Promise<Backend> {
  const backend: Backend = { url: '', base: '', requests: [], sentAt: [], sentData: [], replies: [], aborted: 0, options, close: async () => undefined };
  const server = await startRecordingServer((req, res, body) => { void handle(backend, req, res, body); });
  backend.requests = server.requests;
  backend.url = server.url;
  backend.base = server.base;
  backend.close = server.close;
  return backend;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function handle(backend: Backend, req: IncomingMessage, res: ServerResponse, body: any): Promise<void> {
  const { format, events = 5, gapMs = 5, slowMs = 300 } = backend.options;
  const model: string = body?.model ?? '';
  let closed = false;
  res.on('close', () => { if (!res.writableFinished) { closed = true; backend.aborted++; } });
  const status = /^status-(\d{3})/.exec(model);
  if (status) return send(res, Number(status[1]), { error: { message: `backend says no (${status[1]})`, param: 'temperature', type: 'invalid_request_error' } }, backend.replies);
  if (model.startsWith('garbage-')) return send(res, 200, '<html>not json</html>', backend.replies);
  if (model.startsWith('reset-')) return void res.socket?.destroy();
  if (model.startsWith('slow-')) await sleep(slowMs);
  if (closed) return;
  const withUsage = !model.startsWith('nousage-');
  const params = format === 'native' ? body.model_params ?? {} : body;
  const n: number = Number.isInteger(params.n) ? params.n : 1;
  const indexes = Array.from({ length: n }, (_, i) => i);
  const created = 1_700_000_000;
  const usage = { prompt_tokens: 11, completion_tokens: events * n, total_tokens: 11 + events * n };

  if (req.url?.endsWith('/images/generations')) {
    const data = indexes.map((i) => ({ url: `https://images.example/${i}.png` }));
    return send(res, 200, format === 'native' ? { id: 'img-native', created, data } : { created, data }, backend.replies);
  }
  const stream = body.stream === true;
  if (!stream) {
    const content = WORDS.slice(0, events).join(' ');
    return send(res, 200, {
      id: 'chatcmpl-backend', object: 'chat.completion', created, model, system_fingerprint: 'fp_x',
      choices: indexes.map((index) => ({ index, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null })),
      ...(withUsage ? { usage } : {}),
    }, backend.replies);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  const times: number[] = [];
  const sentData: string[] = [];
  backend.sentAt.push(times);
  backend.sentData.push(sentData);
  const base = { id: 'chatcmpl-stream', object: 'chat.completion.chunk', created, model };
  const write = (data: string) => { times.push(Date.now()); sentData.push(data); res.write(`data: ${data}\n\n`); };
  const includeUsage = format === 'openai' ? body.stream_options?.include_usage === true : true;
  if (model.startsWith('fail-')) {
    const burst = [0, 1].map((i) => JSON.stringify({ ...base, choices: indexes.map((index) => ({ index, delta: i === 0 ? { role: 'assistant', content: WORDS[0] } : { content: ` ${WORDS[1]}` }, finish_reason: null })) }));
    burst.push(JSON.stringify({ error: { message: 'backend overloaded', param: null, reason: 'upstream_error', status: 503 } }));
    burst.forEach((data) => { times.push(Date.now()); sentData.push(data); });
    res.end(burst.map((data) => `data: ${data}\n\n`).join(''));
    return;
  }
  for (let i = 0; i < events; i++) {
    if (closed) return;
    if ((model.startsWith('break-') || model.startsWith('trunc-')) && i === 2) {
      if (model.startsWith('break-')) res.socket?.destroy(); else res.end();
      return;
    }
    const delta = i === 0 ? { role: 'assistant', content: WORDS[i % WORDS.length] } : { content: ` ${WORDS[i % WORDS.length]}` };
    write(JSON.stringify({ ...base, choices: indexes.map((index) => ({ index, delta, finish_reason: null })), ...(format === 'openai' && includeUsage ? { usage: null } : {}) }));
    if (gapMs > 0) await sleep(gapMs);
  }
  if (closed) return;
  if (format === 'openai') {
    // OpenAI/vLLM shape: a finish chunk, then a separate usage-only chunk.
    write(JSON.stringify({ ...base, choices: indexes.map((index) => ({ index, delta: {}, finish_reason: 'stop' })) }));
    if (includeUsage && withUsage) write(JSON.stringify({ ...base, choices: [], usage }));
  } else {
    write(JSON.stringify({ ...base, choices: indexes.map((index) => ({ index, delta: {}, finish_reason: 'stop' })), ...(withUsage ? { usage } : {}) }));
  }
  write('[DONE]');
  if (model.startsWith('linger-')) return; // keeps the connection open after [DONE]
  res.end();
}
