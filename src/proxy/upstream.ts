// One upstream = one http-proxy-middleware instance with its own keep-alive
// agent, built when the config loads. Per request the proxy is handed an
// outgoing request object carrying exactly the headers and body the backend
// may see: the configured upstream headers, content type and length, accept,
// and x-request-id. The client's Authorization, cookies and hop-by-hop
// headers never reach a backend, because they are never copied.
import { Agent as HttpAgent, type IncomingMessage, type ServerResponse, type ClientRequest } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { createProxyMiddleware, type RequestHandler } from 'http-proxy-middleware';
import type { UpstreamConfig } from '../config/schema';
import type { Context } from '../pipeline/context';
import type { Format } from './formats/format';
import { nativeFormat } from './formats/native';
import { openaiFormat } from './formats/openai';
import { fromSocketError } from './status';

/**
 * What http-proxy reads from a request: method, url, headers, socket, event
 * listeners, and `pipe(proxyReq)` for the body. The body is already a string,
 * so `pipe` ends the backend request with it at once: headers and body leave
 * in one write, without a stream in between.
 */
export class OutgoingRequest extends EventEmitter {
  readonly method = 'POST';
  readonly headers: Record<string, string>;
  /**
   * http-proxy asks only whether the client's socket is gone. The real socket is
   * not handed over: http-proxy-middleware would hang a listener on its server
   * per proxy instance, and so keep every reloaded-away config alive.
   */
  readonly socket: { readonly destroyed: boolean };

  constructor(
    readonly url: string,
    client: Socket,
    readonly sluice: Context,
    private readonly body: string,
  ) {
    super();
    this.socket = { get destroyed() { return client.destroyed; } };
    this.headers = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      accept: sluice.stream ? 'text/event-stream' : 'application/json',
      'x-request-id': sluice.id,
    };
  }

  pipe<T extends NodeJS.WritableStream>(destination: T): T {
    destination.end(this.body);
    return destination;
  }
}

/**
 * The target in the parsed shape http-proxy reads (protocol, host with port,
 * hostname, port, path), made once at load: given a string, http-proxy would
 * parse it again for every request.
 */
export function proxyTarget(url: string) {
  const u = new URL(url);
  return { protocol: u.protocol, host: u.host, hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port, path: u.pathname + u.search, href: u.href };
}

const contextOfOutgoing = (out: IncomingMessage): Context => (out as unknown as OutgoingRequest).sluice;

export interface ResponseHandler {
  onResponse(ctx: Context, proxyRes: IncomingMessage, res: ServerResponse, format: Format): void;
  onError(ctx: Context, err: unknown): void;
}

export interface Upstream {
  name: string;
  format: Format;
  forward(ctx: Context, req: IncomingMessage, res: ServerResponse, path: string, body: string): void;
  close(): void;
}

export function createUpstream(name: string, config: UpstreamConfig & { url: string }, handler: ResponseHandler): Upstream {
  const secure = config.url.startsWith('https:');
  const agentOptions = { keepAlive: true, maxSockets: config.maxSockets, maxFreeSockets: Math.min(config.maxSockets, 256), scheduling: 'lifo' as const };
  const agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const format = config.format === 'openai' ? openaiFormat : nativeFormat;
  const headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k.toLowerCase(), v]));

  const proxy: RequestHandler = createProxyMiddleware({
    target: proxyTarget(config.url) as unknown as string,
    changeOrigin: true,
    agent,
    headers,
    selfHandleResponse: true,
    ejectPlugins: true,
    plugins: [(proxyServer) => {
      proxyServer.on('proxyReq', (proxyReq: ClientRequest, out: IncomingMessage) => {
        const ctx = contextOfOutgoing(out);
        ctx.upstreamRequest = proxyReq;
        if (ctx.res.destroyed) proxyReq.destroy();
        proxyReq.setTimeout(config.timeoutMs, () => {
          ctx.upstreamTimedOut = true;
          proxyReq.destroy();
        });
      });
      proxyServer.on('proxyRes', (proxyRes: IncomingMessage, out: IncomingMessage, res: ServerResponse) => {
        handler.onResponse(contextOfOutgoing(out), proxyRes, res, format);
      });
      proxyServer.on('error', (err: Error, out: IncomingMessage) => {
        const ctx = contextOfOutgoing(out);
        handler.onError(ctx, fromSocketError(err, ctx.upstreamTimedOut, name, ctx.streaming));
      });
      // The client left while the backend was still talking: the context already knows.
      proxyServer.on('econnreset', () => undefined);
    }],
  });

  return {
    name,
    format,
    forward(ctx, req, res, path, body) {
      ctx.interrupt = (err) => handler.onError(ctx, err);
      const out = new OutgoingRequest(path, req.socket, ctx, body);
      void proxy(out as unknown as IncomingMessage, res, (err?: unknown) => handler.onError(ctx, err));
    },
    close: () => agent.destroy(),
  };
}
