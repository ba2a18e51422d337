// DEMO BACKEND — not a model. A small in-process server that speaks the
// service interface (format native) so the gateway answers out of the box:
// a deterministic reply streamed word by word, and image URLs it serves itself
// as SVG. `format: demo` upstreams start it; `node dist/src/demo/main.js` runs
// it alone (the compose stack does).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { listen } from '../plumbing/listen';

export interface DemoBackend {
  /** Base URL including /v1, e.g. http://127.0.0.1:8090/v1 */
  url: string;
  server: Server;
  close(): Promise<void>;
}

const WORD_DELAY_MS = 30;

export function demoReply(messages: Array<{ role: string; content: string }>): string {
  const last = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const echo = last.trim().split(/\s+/).filter(Boolean).slice(0, 12).join(' ');
  return `Hello from the Sluice demo backend. You said: "${echo}". This reply is generated word by word and is the same every time.`;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readJson(req: IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try { resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))); } catch { resolve(undefined); }
    });
  });
}

async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJson(req);
  if (!body || !Array.isArray(body.messages)) return json(res, 400, { error: { message: 'messages is required', param: 'messages', reason: 'invalid_request', status: 400 } });
  const params = body.model_params ?? {};
  const n = Number.isInteger(params.n) ? params.n : 1;
  const allWords = demoReply(body.messages).split(' ');
  const maxTokens = Number.isInteger(params.max_tokens) && params.max_tokens > 0 ? params.max_tokens : Infinity;
  const words = allWords.slice(0, maxTokens);
  const finish = words.length < allWords.length ? 'length' : 'stop';
  const promptChars = body.messages.reduce((sum: number, m: { content?: unknown }) => sum + String(m.content ?? '').length, 0);
  const usage = { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: words.length * n, total_tokens: Math.ceil(promptChars / 4) + words.length * n };
  const id = `chatcmpl-demo-${randomUUID().slice(0, 8)}`;
  const created = Math.floor(Date.now() / 1000);
  const base = { id, created, model: body.model };
  const choices = Array.from({ length: n }, (_, index) => index);
  if (body.stream !== true) {
    return json(res, 200, { ...base, object: 'chat.completion', choices: choices.map((index) => ({ index, message: { role: 'assistant', content: words.join(' ') }, finish_reason: finish })), usage });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (chunk: object | string) => res.write(`data: ${typeof chunk === 'string' ? chunk : JSON.stringify({ ...base, object: 'chat.completion.chunk', ...chunk })}\n\n`);
  const delay = Number.isInteger(params.delay_ms) && params.delay_ms >= 0 ? Math.min(params.delay_ms, 2000) : WORD_DELAY_MS;
  let closed = false;
  res.on('close', () => { closed = true; });
  for (let i = 0; i < words.length && !closed; i++) {
    send({ choices: choices.map((index) => ({ index, delta: i === 0 ? { role: 'assistant', content: words[i] } : { content: ` ${words[i]}` }, finish_reason: null })) });
    await new Promise((r) => setTimeout(r, delay));
  }
  if (closed) return;
  send({ choices: choices.map((index) => ({ index, delta: {}, finish_reason: finish })), usage });
  send('[DONE]');
  res.end();
}

async function images(req: IncomingMessage, res: ServerResponse, baseUrl: string): Promise<void> {
  const body = await readJson(req);
  if (!body || typeof body.prompt !== 'string') return json(res, 400, { error: { message: 'prompt is required', param: 'prompt', reason: 'invalid_request', status: 400 } });
  const n = Number.isInteger(body.model_params?.n) ? body.model_params.n : 1;
  const size = typeof body.model_params?.size === 'string' ? body.model_params.size : '512x512';
  const seed = createHash('sha256').update(body.prompt).digest('hex').slice(0, 12);
  const data = Array.from({ length: n }, (_, i) => ({ url: `${baseUrl}/images/${seed}-${i}.svg?size=${encodeURIComponent(size)}` }));
  json(res, 200, { id: `img-demo-${randomUUID().slice(0, 8)}`, created: Math.floor(Date.now() / 1000), data });
}

function svg(res: ServerResponse, name: string, size: string | null): void {
  const [w, h] = /^\d+x\d+$/.test(size ?? '') ? size!.split('x').map(Number) : [512, 512];
  const hue = parseInt(name.slice(0, 6), 16) % 360;
  const text = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="100%" height="100%" fill="hsl(${hue},60%,55%)"/>`
    + `<text x="50%" y="50%" font-family="sans-serif" font-size="${Math.max(12, Math.round(w / 16))}" text-anchor="middle" fill="white">Sluice demo image</text></svg>`;
  res.writeHead(200, { 'content-type': 'image/svg+xml', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** `publicUrl` is the address image URLs are given under (default: the listen address). */
export function startDemoBackend(host = '127.0.0.1', port = 0, publicUrl?: string): Promise<DemoBackend> {
  let baseUrl = '';
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://demo');
    const image = /^\/images\/([0-9a-f]{12}-\d+)\.svg$/.exec(url.pathname);
    if (req.method === 'POST' && url.pathname === '/v1/chat/completions') return void chat(req, res);
    if (req.method === 'POST' && url.pathname === '/v1/images/generations') return void images(req, res, baseUrl);
    if (req.method === 'GET' && image) return svg(res, image[1], url.searchParams.get('size'));
    if (req.method === 'GET' && url.pathname === '/healthz') return json(res, 200, { status: 'ok' }); // the compose stack's healthcheck
    json(res, 404, { error: { message: 'not found', param: null, reason: 'not_found', status: 404 } });
  });
  return listen(server, port, host, 'the demo backend').then(() => {
    const listenUrl = `http://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
    baseUrl = publicUrl?.replace(/\/$/, '') ?? listenUrl;
    return { url: `${listenUrl}/v1`, server, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
  });
}
