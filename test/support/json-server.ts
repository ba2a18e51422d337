// The loopback HTTP server under every test backend: each request's body is
// read whole and parsed as JSON (undefined when it is not), then handed to
// `handle`. `close` drops open connections, so a backend that holds a
// request never keeps a suite from ending.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface JsonServer {
  server: Server;
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** The url with /v1, as an upstream's `url`. */
  base: string;
  close(): Promise<void>;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface RecordingServer extends JsonServer {
  /** Every request so far, in arrival order, kept before `handle` sees it. */
  requests: RecordedRequest[];
}

export async function startJsonServer(handle: (req: IncomingMessage, res: ServerResponse, body: any) => void, port = 0): Promise<JsonServer> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any;
      try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { body = undefined; }
      handle(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${bound}`;
  return {
    server, port: bound, url, base: `${url}/v1`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** A JsonServer that records every request (method, url, headers, parsed body) before handing it on. */
export async function startRecordingServer(handle: (req: IncomingMessage, res: ServerResponse, body: any) => void): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  const server = await startJsonServer((req, res, body) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    handle(req, res, body);
  });
  return { ...server, requests };
}
