// A real node:http backend for pass-through tests: it records every request
// as it arrived (method, path, headers, the body's exact bytes) and answers by
// the path's last segment, so one backend serves every scenario:
//   embeddings   a JSON answer, always the same bytes (EMBEDDINGS_ANSWER)
//   speech       an event stream: its first event at once, the rest after the next `release()`
//   transcriptions  JSON saying how many body bytes and which content type arrived
//   slow         `slowMs` before a JSON answer
//   silent       never answers
//   break        the head and one event, then the connection is destroyed
//   hop          {"ok":true} with hop-by-hop headers: Keep-Alive, and one named in its Connection
// anything else    {"ok":true}
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RawRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface RawBackend {
  url: string;
  requests: RawRequest[];
  /** Lets every `speech` stream held so far finish. */
  release(): void;
  /** `speech` streams that have written their last byte. */
  streamsEnded: number;
  /** Requests whose connection closed before the answer ended (the gateway gave up on them). */
  aborted: number;
  /** Resolves at the next such close. */
  nextAbort(): Promise<void>;
  /** Resolves when the next request has arrived whole. */
  nextRequest(): Promise<void>;
  close(): Promise<void>;
}

/** Deliberately not what JSON.stringify would write: spacing, an escape, a trailing newline. */
export const EMBEDDINGS_ANSWER = '{ "object": "list", "data": [ {"object":"embedding", "embedding": [0.10, -2.5e-3]} ], "note": "caf\\u00e9" }\n';
export const SPEECH_EVENTS = ['data: {"chunk":1}\n\n', 'data: {"chunk":2}\n\n', 'data: [DONE]\n\n'];

export async function startRawBackend(options: { slowMs?: number } = {}): Promise<RawBackend> {
  let release!: () => void;
  let released!: Promise<void>;
  const hold = () => { released = new Promise<void>((resolve) => { release = resolve; }); };
  hold();
  const abortWaiters: Array<() => void> = [];
  const requestWaiters: Array<() => void> = [];
  const backend: RawBackend = {
    url: '', requests: [], streamsEnded: 0, aborted: 0,
    release: () => { release(); hold(); },
    nextAbort: () => new Promise((resolve) => abortWaiters.push(resolve)),
    nextRequest: () => new Promise((resolve) => requestWaiters.push(resolve)),
    close: async () => undefined,
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      backend.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      requestWaiters.splice(0).forEach((resolve) => resolve());
      res.on('close', () => {
        if (res.writableFinished) return;
        backend.aborted++;
        abortWaiters.splice(0).forEach((resolve) => resolve());
      });
      const last = (req.url ?? '').split('?')[0].split('/').pop();
      const json = (text: string) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'x-request-id': 'backend-own-id' });
        res.end(text);
      };
      switch (last) {
        case 'embeddings': return json(EMBEDDINGS_ANSWER);
        case 'transcriptions': return json(JSON.stringify({ bytes: body.length, type: req.headers['content-type'] }));
        case 'slow': return void setTimeout(() => json('{"ok":true}'), options.slowMs ?? 50);
        case 'silent': return;
        case 'hop':
          res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive, x-backend-hop', 'x-backend-hop': 'only for the gateway', 'keep-alive': 'timeout=2', 'x-backend-kept': 'yes' });
          return void res.end('{"ok":true}');
        case 'break':
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          return void res.write(SPEECH_EVENTS[0], () => res.socket?.destroy());
        case 'speech':
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          res.write(SPEECH_EVENTS[0]);
          return void released.then(() => {
            if (res.destroyed) return;
            res.write(SPEECH_EVENTS[1]);
            res.end(SPEECH_EVENTS[2], () => { backend.streamsEnded++; });
          });
        default: return json('{"ok":true}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  backend.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  backend.close = () => new Promise((resolve) => { release(); server.closeAllConnections(); server.close(() => resolve()); });
  return backend;
}
