// The metrics listener: a plain node:http server, apart from the public port,
// that answers GET /metrics in the Prometheus text format and nothing else.
// With a token, a scrape must send `Authorization: Bearer <token>`.
//
//   const metrics = await startMetricsServer(registry, { host: '127.0.0.1', port: 9464, token });
//   ...; await metrics.close();
//
// `port` is the port to listen on, 0 meaning any free one (tests). The config's
// "server.metrics.port: 0 turns it off" is decided by the caller (src/server.ts).
// The source is a prom-client Registry, or with several workers the primary's
// aggregate of theirs (src/cluster/metrics.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { bind, type Listener } from '../plumbing/listen';

export interface MetricsServerOptions {
  host: string;
  port: number;
  token?: string;
}

/** What the listener serves: a prom-client Registry is one. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/** Base URL, e.g. http://127.0.0.1:9464; scrape `${url}/metrics`. */
export type MetricsServer = Listener;

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

const BEARER = /^Bearer[ \t]+(.+?)[ \t]*$/i;

/** Compares digests, so the time taken says nothing about the token. */
function tokenCheck(token: string | undefined): (header: string | undefined) => boolean {
  if (token === undefined) return () => true;
  const expected = digest(token);
  return (header) => {
    const presented = header === undefined ? null : BEARER.exec(header);
    return presented !== null && timingSafeEqual(digest(presented[1]), expected);
  };
}

function answer(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function metricsHandler(registry: MetricsSource, token?: string): (req: IncomingMessage, res: ServerResponse) => void {
  const authorized = tokenCheck(token);
  return (req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') return answer(res, 404, 'Not found. Metrics are at GET /metrics.\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(res, 405, 'Method not allowed.\n', { allow: 'GET, HEAD' });
    if (!authorized(req.headers.authorization)) return answer(res, 401, 'Unauthorized.\n', { 'www-authenticate': 'Bearer' });
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': registry.contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => answer(res, 500, 'Collecting metrics failed.\n'),
    );
  };
}

export function startMetricsServer(registry: MetricsSource, options: MetricsServerOptions): Promise<MetricsServer> {
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000 }, metricsHandler(registry, options.token));
  return bind(server, options.port, options.host, 'metrics (server.metrics)');
}
