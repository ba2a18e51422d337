// Pass-through forwarding on http-proxy-middleware: one proxy and one
// keep-alive agent per upstream setting. The request and the answer pass as
// bytes, streamed both ways (no responseInterceptor: it would hold a whole
// answer). The path keeps everything after its version, under the upstream
// URL's own path:
//
//   upstream url http://10.0.0.5:8000/v1    client POST /v2/embeddings?x=1
//   -> POST http://10.0.0.5:8000/v1/embeddings?x=1
import { Agent as HttpAgent, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Logger } from 'pino';
import { createProxyMiddleware, type RequestHandler } from 'http-proxy-middleware';
import type { UpstreamConfig } from '../../config/schema';
import type { Context } from '../../pipeline/context';
import type { Pipeline } from '../../pipeline/pipeline';
import { KEEP_ALIVE_MS } from '../../proxy/upstream';
import { PassthroughCall } from './call';
import { dropHopByHop } from './hop-headers';

export interface PassthroughProxy {
  /** Sends the request on; `unreadLimit` is set when its body passes unread. The answer goes straight to `res`. */
  forward(ctx: Context, req: IncomingMessage, res: ServerResponse, unreadLimit?: number): void;
}

type ProxySettings = Pick<UpstreamConfig, 'headers' | 'timeoutMs' | 'maxSockets'> & { url: string };

// Never sent on: the client's credentials (the gateway's key, cookies), hop-by-hop headers (see
// dropHopByHop), and Expect (the gateway has answered 100-continue itself; the proxy skips its
// proxyReq event when it is set).
const NOT_FORWARDED = ['authorization', 'proxy-authorization', 'cookie', 'expect'];
/** A chunked body is forwarded chunked: its framing is the one hop-by-hop header that stays. */
const REQUEST_FRAMING = ['transfer-encoding'];

/** "/v1/embeddings?x=1" without its version: "/embeddings?x=1". Every pass-through path starts /v1/ or /v2/. */
const VERSION_PREFIX = '/v1'.length;

/** Each request's call, for the proxy's events (they name the request, not the call). */
const calls = new WeakMap<IncomingMessage, PassthroughCall>();

/**
 * The proxies live as long as the process, one per distinct setting: a proxy
 * subscribes to its server's close event on its first request and never
 * lets go, so one per config would pile listeners, and every retired
 * config, onto the server with each reload. A reload that keeps an
 * upstream's setting keeps its proxy and its agent's connections.
 */
const proxies = new Map<string, RequestHandler<IncomingMessage, ServerResponse>>();

function proxyFor(settings: ProxySettings): RequestHandler<IncomingMessage, ServerResponse> {
  const key = JSON.stringify([settings.url, settings.headers, settings.timeoutMs, settings.maxSockets]);
  let proxy = proxies.get(key);
  if (proxy !== undefined) return proxy;
  const url = new URL(settings.url);
  const base = url.pathname.replace(/\/+$/, '');
  const AgentClass = url.protocol === 'https:' ? HttpsAgent : HttpAgent;
  // Idle sockets close before a typical server's own idle timeout, as for chat and images; the
  // agent's timeout also bounds a connection attempt (then the request's own timeout applies).
  const agent = new AgentClass({ keepAlive: true, maxSockets: settings.maxSockets, timeout: KEEP_ALIVE_MS });
  proxy = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: url.origin,
    changeOrigin: true,
    agent,
    // Added after the client's headers: the upstream's configured ones win.
    headers: Object.fromEntries(Object.entries(settings.headers).map(([k, v]) => [k.toLowerCase(), v])),
    // Silence on the backend's socket for longer than this ends the request (504).
    proxyTimeout: settings.timeoutMs,
    pathRewrite: (path) => base + path.slice(VERSION_PREFIX),
    on: {
      start: (req) => calls.get(req)?.started(req),
      proxyReq: (proxyReq, req) => calls.get(req)?.requestSent(proxyReq),
      proxyRes: (proxyRes, req) => calls.get(req)?.answered(proxyRes),
      // Replaces the library's own error answer: the gateway's error object comes from the error middleware.
      error: (err, req) => calls.get(req)?.failed(err),
    },
  });
  proxies.set(key, proxy);
  return proxy;
}

export function createPassthroughProxy(name: string, config: ProxySettings, pipeline: Pipeline, logger: Logger): PassthroughProxy {
  const proxy = proxyFor(config);
  const settings = { upstream: name, timeoutMs: config.timeoutMs, pipeline, logger };
  return {
    forward(ctx, req, res, unreadLimit) {
      // The proxy copies the request's headers: what must not reach the backend is removed
      // here, before it starts (by its proxyReq event the head may already be written).
      dropHopByHop(req.headers, REQUEST_FRAMING);
      for (const header of NOT_FORWARDED) delete req.headers[header];
      req.headers['x-request-id'] = ctx.id;
      // A traced request's backend gets the gateway's span as its parent. Untraced (tracing off, or
      // this request not sampled), the client's trace context passes as sent, as through any proxy:
      // a caller's trace that the gateway does not record still reaches the backend whole.
      ctx.trace?.propagate(req.headers);
      const call = new PassthroughCall(ctx, settings, unreadLimit);
      calls.set(req, call);
      ctx.forwarding.track(call);
      // The middleware calls next() only if preparing the request failed.
      void proxy(req, res, (err: Error) => call.fail(err));
    },
  };
}
