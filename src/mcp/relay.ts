// One MCP server behind the gateway: a request relayed to its URL on undici,
// with the configured headers (its credentials) and only the client headers
// the Streamable HTTP transport defines; the answer's status, those headers
// and its body back to the client chunk by chunk as they arrive. A JSON answer
// to a tools/list request is held (up to MAX_HELD_BYTES) to filter it; an event
// stream is filtered event by event. timeoutMs bounds the wait for the
// answer's head; a stream then stays open as long as both ends keep it. The
// answer to tool calls holds each message whole, bounded (result-hold.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';
import type { McpServerConfig } from '../config/schema';
import { KEEP_ALIVE_MS } from '../proxy/upstream';
import { EventFilter } from './event-filter';
import { CallEvents, holdJson, type CallRelay } from './result-hold';
import { filterToolLists, parseJson, type ToolAllowed } from './list-filter';
import type { JsonRpcId } from './messages';
import type { McpFailure } from './errors';

// What the transport specification has a client send (basic/transports): its session, the
// protocol version, where a resumed stream left off, and the message's media types.
const FROM_CLIENT = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'];
// ...and what comes back: the session a server assigns, the answer's media type; Allow on a 405
// (a server that offers no GET stream or no DELETE says so), and no caching of an event stream.
const FROM_SERVER = ['content-type', 'mcp-session-id', 'mcp-protocol-version', 'allow', 'cache-control'];

const CLIENT_CLOSED = 499;

/** The most of a JSON tools/list answer, or of one event of a stream being filtered, held to filter it. */
const MAX_HELD_BYTES = 16 * 1024 * 1024;
const JSON_TYPE = /^application\/json\b/i;
const EVENT_STREAM = /^text\/event-stream\b/i;

/** What a tools/list answer must lose: the list requests' ids, and which tools stay. */
export interface ListFilter {
  ids: ReadonlySet<JsonRpcId>;
  allowed: ToolAllowed;
}

/** How a relayed request ended: the status the client got, or why the gateway answered instead. */
export type RelayEnd = { status: number } | { failure: McpFailure };

export class McpServerRelay {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(config: McpServerConfig) {
    const url = new URL(config.url);
    this.path = `${url.pathname}${url.search}`;
    this.headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k.toLowerCase(), v]));
    // The request's own timer bounds the wait for the head; a stream may then be quiet as long as it likes.
    this.timeoutMs = config.timeoutMs;
    this.pool = new Pool(url.origin, { keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: 0, bodyTimeout: 0, connect: { timeout: config.timeoutMs } });
  }

  /** Relays `req` (its body already read, when it has one) and writes the answer to `res`; never throws. */
  async relay(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, filter: ListFilter | undefined, calls?: CallRelay): Promise<RelayEnd> {
    const headers: Record<string, string> = {};
    for (const name of FROM_CLIENT) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    Object.assign(headers, this.headers);
    const abort = new AbortController();
    let timedOut = false;
    let clientLeft = false;
    // The server's side failed (its body broke off, or an event passed the limit): the cut of the client's connection that follows is the gateway's own.
    let broke = false;
    const timer = setTimeout(() => { timedOut = true; abort.abort(); }, this.timeoutMs);
    const left = (): void => { if (!res.writableFinished && !broke) { clientLeft = true; abort.abort(); } };
    res.once('close', left);
    try {
      const answer = await this.pool.request({ path: this.path, method: req.method as 'GET' | 'POST' | 'DELETE', headers, body, signal: abort.signal });
      clearTimeout(timer);
      const status = answer.statusCode;
      // The server refused the gateway's own credentials: the operator's problem, not the client's.
      if (status === 401 || status === 403) {
        answer.body.resume();
        return { failure: 'server_error' };
      }
      for (const name of FROM_SERVER) {
        const value = answer.headers[name];
        if (value !== undefined) res.setHeader(name, value);
      }
      const type = String(answer.headers['content-type'] ?? '');
      // Any 2xx a client may read a result from: an answer of another type is held as JSON is, never passed unread.
      const holding = calls !== undefined && status >= 200 && status < 300;
      if (holding && !EVENT_STREAM.test(type)) {
        const out = await holdJson(answer.body, answer.headers['content-length'], calls);
        res.writeHead(status, { 'content-length': Buffer.byteLength(out) });
        res.end(out);
        return { status };
      }
      if (filter !== undefined && filter.ids.size > 0 && status === 200 && JSON_TYPE.test(type)) {
        const text = await readText(answer.body, MAX_HELD_BYTES);
        if (text === undefined) return { failure: 'server_error' };
        const filtered = filterToolLists(parseJson(text), filter.ids, filter.allowed);
        const out = filtered === undefined ? text : JSON.stringify(filtered);
        res.writeHead(status, { 'content-length': Buffer.byteLength(out) });
        res.end(out);
        return { status };
      }
      res.writeHead(status);
      // The head goes at once: a client waiting on an event stream learns it is open before its first event.
      res.flushHeaders();
      const filtering = filter !== undefined && filter.ids.size > 0 && EVENT_STREAM.test(type);
      answer.body.once('error', () => { broke = true; });
      if (holding && EVENT_STREAM.test(type)) {
        const events = new CallEvents(calls);
        events.once('error', () => { broke = true; });
        await pipeline(answer.body, events, res);
      } else if (filtering) {
        const events = new EventFilter(filter.ids, filter.allowed, MAX_HELD_BYTES);
        events.once('error', () => { broke = true; });
        await pipeline(answer.body, events, res);
      } else {
        await pipeline(answer.body, res);
      }
      return { status };
    } catch {
      clearTimeout(timer);
      // Recorded as 499, as the gateway records a client that left.
      if (clientLeft) return { status: CLIENT_CLOSED };
      // Mid-answer, the server broke off (or sent an event past its limit): sendFailure cuts the connection.
      if (res.headersSent) return { failure: 'server_error' };
      if (timedOut) return { failure: 'timeout' };
      return { failure: 'unreachable' };
    } finally {
      res.off('close', left);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** The whole body as text, or undefined past `limit` bytes. */
async function readText(body: Readable, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
