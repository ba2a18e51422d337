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
import { fromSocketError, type Phase } from './status';

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

  /** Bounds the wait for the backend's head, queueing for a socket included. */
  headTimer?: NodeJS.Timeout;
  /** This attempt is the retry of one that died on a reused idle socket. */
  retried = false;

  constructor(
    readonly url: string,
    client: Socket,
    readonly sluice: Context,
    readonly body: string,
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

/** How much of a backend's answer the gateway holds at once. */
export interface AnswerLimits {
  /** A whole JSON answer. */
  maxAnswerBytes: number;
  /** One server-sent event. */
  maxEventBytes: number;
}

export interface ResponseHandler {
  onResponse(ctx: Context, proxyRes: IncomingMessage, res: ServerResponse, format: Format, limits: AnswerLimits): void;
  onError(ctx: Context, err: unknown): void;
}

// Errors only a connection attempt raises: name resolution, refusal, routing, TLS.
const CONNECT_ERRORS = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNABORTED|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/;

/** How far an attempt got when it failed: the access log's and the metrics' "why". */
function phaseOf(ctx: Context, proxyReq: ClientRequest | undefined, code: string | undefined): Phase {
  if (ctx.streaming) return 'stream';
  if (ctx.timings.upstreamFirstByte !== undefined) return 'body';
  const socket = proxyReq?.socket;
  if (socket === null || socket === undefined) return 'queue';
  return socket.connecting || (code !== undefined && CONNECT_ERRORS.test(code)) ? 'connect' : 'head';
}

/**
 * A keep-alive socket the backend closed while it sat idle fails the next
 * request before the backend reads it: that attempt is retried once, on a
 * fresh connection (the pool's other idle sockets to the backend are likely
 * dead too, so they go first).
 */
function diedOnIdleSocket(err: NodeJS.ErrnoException, ctx: Context, out: OutgoingRequest): boolean {
  const proxyReq = ctx.upstreamRequest;
  return !out.retried && proxyReq?.reusedSocket === true && (err.code === 'ECONNRESET' || err.code === 'EPIPE')
    && ctx.timings.upstreamFirstByte === undefined && !ctx.upstreamTimedOut && !ctx.res.destroyed;
}

export interface Upstream {
  name: string;
  format: Format;
  forward(ctx: Context, req: IncomingMessage, res: ServerResponse, path: string, body: string): void;
  close(): void;
}

const dropIdleSockets = (agent: HttpAgent): void => {
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
};

export function createUpstream(name: string, config: UpstreamConfig & { url: string }, handler: ResponseHandler): Upstream {
  const secure = config.url.startsWith('https:');
  const agentOptions = { keepAlive: true, maxSockets: config.maxSockets, maxFreeSockets: Math.min(config.maxSockets, 256), scheduling: 'lifo' as const };
  const agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const format = config.format === 'openai' ? openaiFormat : nativeFormat;
  const headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const limits: AnswerLimits = { maxAnswerBytes: config.maxAnswerBytes, maxEventBytes: config.maxEventBytes };
  let send: (out: OutgoingRequest, res: ServerResponse) => void;

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
        clearTimeout((out as unknown as OutgoingRequest).headTimer);
        handler.onResponse(contextOfOutgoing(out), proxyRes, res, format, limits);
      });
      proxyServer.on('error', (error: Error, incoming: IncomingMessage, res: ServerResponse | Socket) => {
        const err = error as NodeJS.ErrnoException;
        const out = incoming as unknown as OutgoingRequest;
        const ctx = out.sluice;
        clearTimeout(out.headTimer);
        if (diedOnIdleSocket(err, ctx, out)) {
          dropIdleSockets(agent);
          const retry = new OutgoingRequest(out.url, ctx.res.socket!, ctx, out.body);
          retry.retried = true;
          return send(retry, res as ServerResponse);
        }
        handler.onError(ctx, fromSocketError(err, ctx.upstreamTimedOut, name, phaseOf(ctx, ctx.upstreamRequest, err.code)));
      });
      // The client left while the backend was still talking: the context already knows.
      proxyServer.on('econnreset', () => undefined);
    }],
  });

  send = (out, res) => {
    const ctx = out.sluice;
    // timeoutMs bounds the wait for the head from the start, a wait for a free socket included.
    out.headTimer = setTimeout(() => {
      ctx.upstreamTimedOut = true;
      ctx.upstreamRequest?.destroy();
    }, config.timeoutMs);
    void proxy(out as unknown as IncomingMessage, res, (err?: unknown) => handler.onError(ctx, err));
  };

  return {
    name,
    format,
    forward(ctx, req, res, path, body) {
      ctx.interrupt = (err) => handler.onError(ctx, err);
      send(new OutgoingRequest(path, req.socket, ctx, body), res);
    },
    close: () => agent.destroy(),
  };
}
