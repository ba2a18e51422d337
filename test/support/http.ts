// A tiny real HTTP client for tests: JSON requests, and SSE requests that
// record when each event arrived.
import { request } from 'node:http';
import { connect } from 'node:net';

export interface JsonResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

/** `fresh`: a connection of its own, closed after the answer (node:cluster hands connections, not requests, to its workers). */
export function post(url: string, body: unknown, headers: Record<string, string> = {}, fresh = false): Promise<JsonResponse> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return call('POST', url, payload, { 'content-type': 'application/json', ...headers }, fresh);
}

export function call(method: string, url: string, payload: string | Buffer | undefined, headers: Record<string, string> = {}, fresh = false): Promise<JsonResponse> {
  return new Promise((resolve, reject) => {
    const options = { method, headers: payload === undefined ? headers : { 'content-length': String(Buffer.byteLength(payload)), ...headers }, ...(fresh && { agent: false as const }) };
    const req = request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: any;
        try { parsed = JSON.parse(text); } catch { parsed = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A POST whose body goes in these chunks without Content-Length (chunked transfer encoding). */
export function postChunked(url: string, chunks: string[], headers: Record<string, string> = {}): Promise<JsonResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => {
        let parsed: any;
        try { parsed = JSON.parse(text); } catch { parsed = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text });
      });
    });
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

/** `event`: the block's `event:` name, when it has one (Responses and Messages streams name theirs). */
export interface SseEvent { data: string; at: number; event?: string }

export interface SseResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  events: SseEvent[];
  raw: string;
}

/** One event block: its data line, and its `event:` line when it has one; undefined for a comment or an empty block. */
function sseEvent(block: string, at: number): SseEvent | undefined {
  if (block.startsWith('data: ')) return { data: block.slice(6), at };
  if (!block.startsWith('event: ')) return undefined;
  const newline = block.indexOf('\n');
  if (newline === -1 || !block.startsWith('data: ', newline + 1)) return undefined;
  return { event: block.slice(7, newline), data: block.slice(newline + 7), at };
}

/** Streams a request; `abortAfter` closes the connection after that many events; `onEvent` sees each one as it arrives. */
export function postSse(url: string, body: unknown, headers: Record<string, string> = {}, abortAfter?: number, fresh = false, onEvent?: (event: SseEvent) => void): Promise<SseResponse> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), ...headers }, ...(fresh && { agent: false as const }) }, (res) => {
      const out: SseResponse = { status: res.statusCode ?? 0, headers: res.headers, events: [], raw: '' };
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const at = Date.now();
        out.raw += chunk;
        buffer += chunk;
        let i: number;
        while ((i = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const event = sseEvent(block, at);
          if (event !== undefined) { out.events.push(event); onEvent?.(event); }
        }
        if (abortAfter !== undefined && out.events.length >= abortAfter) { req.destroy(); resolve(out); }
      });
      res.on('end', () => resolve(out));
      res.on('error', () => resolve(out));
    });
    req.on('error', (err) => (abortAfter !== undefined ? undefined : reject(err)));
    req.end(payload);
  });
}

export const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

/**
 * One request written byte for byte on a bare socket: for what http.request
 * will not send, such as a header given twice. `headers` are [name, value]
 * pairs in order; content-length and connection: close are added.
 */
export function rawRequest(url: string, method: string, path: string, headers: Array<[string, string]>, body = ''): Promise<JsonResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      socket.end();
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = raw.slice(0, split).split('\r\n');
      const responseHeaders: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        responseHeaders[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const text = raw.slice(split + 4);
      let parsed: any;
      try { parsed = JSON.parse(text); } catch { parsed = undefined; }
      resolve({ status: Number(statusLine.split(' ')[1]), headers: responseHeaders, body: parsed, text });
    });
    const head = [`${method} ${path} HTTP/1.1`, `host: ${hostname}:${port}`, ...headers.map(([n, v]) => `${n}: ${v}`), `content-length: ${Buffer.byteLength(body)}`, 'connection: close'];
    // write, not end: a client that half-closes its side has left, as far as the gateway can tell.
    socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
}
