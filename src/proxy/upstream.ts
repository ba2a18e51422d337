// One upstream = one undici Pool (keep-alive connections to one backend),
// built when the config loads. Per request the backend gets exactly the
// headers it may see: the configured upstream headers, content type, accept
// and x-request-id. The client's Authorization, cookies and hop-by-hop
// headers never reach a backend, because they are never copied.
import { Client, Pool, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../config/schema';
import type { Context } from '../pipeline/context';
import type { Pipeline } from '../pipeline/pipeline';
import type { Format } from './formats/format';
import { nativeFormat } from './formats/native';
import { openaiFormat } from './formats/openai';
import { UpstreamCall, type CallSettings } from './call';
import type { Reply } from './reply';

export interface Upstream {
  name: string;
  format: Format;
  /** Sends the request body to `path` under the upstream's URL; the answer goes to the client through `reply`. */
  forward(ctx: Context, path: string, body: string): void;
  close(): Promise<void>;
}

/** Idle keep-alive connections are closed before a typical server's own idle timeout (Node's is 5 s). */
export const KEEP_ALIVE_MS = 4_000;

export function createUpstream(name: string, config: UpstreamConfig & { url: string }, pipeline: Pipeline, reply: Reply): Upstream {
  const url = new URL(config.url);
  const base = url.pathname.replace(/\/+$/, '');
  const options = {
    keepAliveTimeout: KEEP_ALIVE_MS,
    // The call's own timer bounds the wait for the head and each silence after it (to the millisecond).
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: config.timeoutMs },
  };
  const pool = new Pool(url.origin, { ...options, connections: config.maxSockets });
  /**
   * A retry after a connection died unanswered goes over a connection of its
   * own: the pool's other idle connections to this backend may be dead too.
   */
  const freshConnection = (): Dispatcher => {
    const client = new Client(url.origin, options);
    setImmediate(() => void client.close()); // closes once its one request is done
    return client;
  };
  const format = config.format === 'openai' ? openaiFormat : nativeFormat;
  const headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const settings: CallSettings = { upstream: name, format, timeoutMs: config.timeoutMs, maxAnswerBytes: config.maxAnswerBytes, maxEventBytes: config.maxEventBytes };

  const send = (ctx: Context, path: string, body: string, dispatcher: Dispatcher): void => {
    const retry = dispatcher === pool ? () => send(ctx, path, body, freshConnection()) : undefined;
    const call = new UpstreamCall(ctx, settings, pipeline, reply, retry);
    ctx.forwarding.abortUpstream = () => call.abandon();
    dispatcher.dispatch({
      path: base + path,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: ctx.stream ? 'text/event-stream' : 'application/json', 'x-request-id': ctx.id },
      body,
    }, call);
  };

  return {
    name,
    format,
    forward(ctx, path, body) {
      ctx.forwarding.interrupt = (err) => reply.fail(ctx, err);
      send(ctx, path, body, pool);
    },
    close: () => pool.destroy(),
  };
}
