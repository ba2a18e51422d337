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

/** One server-sent event: its data, its `event:` name when it has one (Responses, Messages), and when it arrived. */
export interface SseEvent { data: string; event?: string; at: number }

export interface SseResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  events: SseEvent[];
  raw: string;
}

const EVENT_LINE = /^event: (.*)\n/;

/** A stream being read: its events so far, a wait for the first one of a name, and a close from the client's side. */
export interface OpenSse {
  /** Resolves with everything read once the stream ends, fails, or is closed. */
  done: Promise<SseResponse>;
  events: SseEvent[];
  /** The first event named `event` (the `event:` line), as soon as it arrives; rejects if the stream ends without one. */
  next(event: string): Promise<SseEvent>;
  close(): void;
}

/** Streams a request and hands it back open; `abortAfter` closes the connection after that many events; `onEvent` sees each one as it arrives. */
export function openSse(url: string, body: unknown, headers: Record<string, string> = {}, abortAfter?: number, fresh = false, onEvent?: (event: SseEvent) => void): OpenSse {
  const out: SseResponse = { status: 0, headers: {}, events: [], raw: '' };
  const waiting: Array<{ event: string; resolve(e: SseEvent): void; reject(err: Error): void }> = [];
  let finish: (r: SseResponse) => void = () => undefined;
  let fail: (err: Error) => void = () => undefined;
  const done = new Promise<SseResponse>((resolve, reject) => { finish = resolve; fail = reject; });
  void done.catch(() => undefined).then(() => {
    for (const w of waiting.splice(0)) w.reject(new Error(`the stream ended without a ${w.event} event`));
  });
  const payload = JSON.stringify(body);
  const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), ...headers }, ...(fresh && { agent: false as const }) }, (res) => {
    out.status = res.statusCode ?? 0;
    out.headers = res.headers;
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
        const event = EVENT_LINE.exec(block);
        const data = event === null ? block : block.slice(event[0].length);
        if (!data.startsWith('data: ')) continue;
        const e: SseEvent = { data: data.slice(6), ...(event !== null && { event: event[1] }), at };
        out.events.push(e);
        onEvent?.(e);
        for (const w of waiting.filter((x) => x.event === e.event)) { waiting.splice(waiting.indexOf(w), 1); w.resolve(e); }
      }
      if (abortAfter !== undefined && out.events.length >= abortAfter) { req.destroy(); finish(out); }
    });
    res.on('end', () => finish(out));
    res.on('error', () => finish(out));
    res.on('close', () => finish(out));
  });
  req.on('error', (err) => (abortAfter !== undefined ? finish(out) : fail(err)));
  req.end(payload);
  return {
    done,
    events: out.events,
    next: (event) => {
      const seen = out.events.find((e) => e.event === event);
      return seen !== undefined ? Promise.resolve(seen) : new Promise((resolve, reject) => waiting.push({ event, resolve, reject }));
    },
    close: () => { req.destroy(); finish(out); },
  };
}

/** Streams a request to its end; `abortAfter` closes the connection after that many events; `onEvent` sees each one as it arrives. */
export function postSse(url: string, body: unknown, headers: Record<string, string> = {}, abortAfter?: number, fresh = false, onEvent?: (event: SseEvent) => void): Promise<SseResponse> {
  return openSse(url, body, headers, abortAfter, fresh, onEvent).done;
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
