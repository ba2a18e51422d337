// A tiny real HTTP client for tests: JSON requests, and SSE requests that
// record when each event arrived.
import { request } from 'node:http';

export interface JsonResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

export function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  return call('POST', url, payload, { 'content-type': 'application/json', ...headers });
}

export function call(method: string, url: string, payload: string | undefined, headers: Record<string, string> = {}): Promise<JsonResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: payload === undefined ? headers : { 'content-length': String(Buffer.byteLength(payload)), ...headers } }, (res) => {
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

export interface SseEvent { data: string; at: number }

export interface SseResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  events: SseEvent[];
  raw: string;
}

/** Streams a request; `abortAfter` closes the connection after that many events. */
export function postSse(url: string, body: unknown, headers: Record<string, string> = {}, abortAfter?: number): Promise<SseResponse> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), ...headers } }, (res) => {
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
          if (block.startsWith('data: ')) out.events.push({ data: block.slice(6), at });
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
