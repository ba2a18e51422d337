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
import type { McpHttpServerConfig } from '../config/schema';
import { KEEP_ALIVE_MS } from '../proxy/upstream';
import { EventFilter } from './event-filter';
import { CallEvents, holdJson, type CallRelay } from './result-hold';
import { filterToolLists, parseJson, type ToolAllowed } from './list-filter';
import type { JsonRpcId } from './messages';
import type { McpFailure } from './errors';
import type { SessionBinding } from './session-binding';
import type { McpOutcome } from './metrics';

// What the transport specification has a client send (basic/transports): its session, the
// protocol version, where a resumed stream left off, and the message's media types; and, from
// the 2026-07-28 revision, the body's method and name mirrored into headers (and every
// Mcp-Param-<name> a tool's schema mirrors, which an intermediary must pass on).
const FROM_CLIENT = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id', 'mcp-method', 'mcp-name'];
const PARAM_HEADER = /^mcp-param-/;
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

/** How a relayed request ended: the status the client got (and, when the gateway answered a request in it, how it counts), why the gateway answered instead, or (for a federated session) that the server no longer knows it; and the body's bytes the client was sent, where counted. */
export type RelayEnd = ({ status: number; outcome?: McpOutcome } | { failure: McpFailure } | { gone: true }) & { bytes?: number };

/** Who sends a request (the key's id) and its body's JSON: what a relay that keeps sessions itself needs. */
export interface RelayCaller {
  key: string;
  json: unknown;
}

/** A server at /mcp/<name>: relayed over HTTP (McpServerRelay) or started by the gateway (McpStdioRelay). */
export interface McpRelay {
  relay(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, filter: ListFilter | undefined, caller: RelayCaller, upstream?: UpstreamSession, binding?: SessionBinding, calls?: CallRelay): Promise<RelayEnd>;
  close(): Promise<void>;
}

/**
 * A request the gateway sends in a session of its own with the server (the
 * federated /mcp): that session's id and version replace the client's, the
 * server's session id never reaches the client, and a 404 (the server ended
 * the session) is returned unanswered so the session can be begun again.
 */
export interface UpstreamSession {
  session?: string;
  version: string;
}

/** The answer to a request of the gateway's own, read whole. */
export interface Exchanged {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export class McpServerRelay implements McpRelay {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(config: McpHttpServerConfig) {
    const url = new URL(config.url);
    this.path = `${url.pathname}${url.search}`;
    this.headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k.toLowerCase(), v]));
    // The request's own timer bounds the wait for the head; a stream may then be quiet as long as it likes.
    this.timeoutMs = config.timeoutMs;
    this.pool = new Pool(url.origin, { keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: 0, bodyTimeout: 0, connect: { timeout: config.timeoutMs } });
  }

  /** Relays `req` (its body already read, when it has one) and writes the answer to `res`; never throws. */
  async relay(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined, filter: ListFilter | undefined, _caller?: RelayCaller, upstream?: UpstreamSession, binding?: SessionBinding, calls?: CallRelay): Promise<RelayEnd> {
    const headers: Record<string, string> = {};
    for (const name of FROM_CLIENT) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    for (const [name, value] of Object.entries(req.headers)) {
      if (PARAM_HEADER.test(name) && typeof value === 'string') headers[name] = value;
    }
    if (binding !== undefined) {
      delete headers['mcp-session-id'];
      if (binding.session !== undefined) headers['mcp-session-id'] = binding.session;
    }
    if (upstream !== undefined) sessionHeaders(headers, upstream);
    Object.assign(headers, this.headers);
    const abort = new AbortController();
    let timedOut = false;
    let clientLeft = false;
    // The server's side failed (its body broke off, or an event passed the limit): the cut of the client's connection that follows is the gateway's own.
    let broke = false;
    // The answer's bytes as they go to the client, counted on the way (a listener beside the pipe's, no copy).
    let bytes = 0;
    const count = (chunk: Buffer): void => { bytes += chunk.length; };
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
        return { failure: 'server_error', bytes };
      }
      if (upstream !== undefined && status === 404) {
        answer.body.resume();
        return { gone: true, bytes: 0 };
      }
      for (const name of FROM_SERVER) {
        const value = answer.headers[name];
        if (value === undefined || (upstream !== undefined && name === 'mcp-session-id')) continue;
        res.setHeader(name, binding !== undefined && name === 'mcp-session-id' && typeof value === 'string' ? binding.wrap(value) : value);
      }
      const type = String(answer.headers['content-type'] ?? '');
      // Any 2xx a client may read a result from: an answer of another type is held as JSON is, never passed unread.
      const holding = calls !== undefined && status >= 200 && status < 300;
      if (holding && !EVENT_STREAM.test(type)) {
        const out = await holdJson(answer.body, answer.headers['content-length'], calls);
        bytes = Buffer.byteLength(out);
        res.writeHead(status, { 'content-length': bytes });
        res.end(out);
        return { status, bytes };
      }
      if (filter !== undefined && filter.ids.size > 0 && status === 200 && JSON_TYPE.test(type)) {
        const text = await readText(answer.body, MAX_HELD_BYTES);
        if (text === undefined) return { failure: 'server_error', bytes };
        const filtered = filterToolLists(parseJson(text), filter.ids, filter.allowed);
        const out = filtered === undefined ? text : JSON.stringify(filtered);
        bytes = Buffer.byteLength(out);
        res.writeHead(status, { 'content-length': bytes });
        res.end(out);
        return { status, bytes };
      }
      res.writeHead(status);
      // The head goes at once: a client waiting on an event stream learns it is open before its first event.
      res.flushHeaders();
      const filtering = filter !== undefined && filter.ids.size > 0 && EVENT_STREAM.test(type);
      answer.body.once('error', () => { broke = true; });
      if (holding && EVENT_STREAM.test(type)) {
        const events = new CallEvents(calls);
        events.once('error', () => { broke = true; });
        events.on('data', count);
        await pipeline(answer.body, events, res);
      } else if (filtering) {
        const events = new EventFilter(filter.ids, filter.allowed, MAX_HELD_BYTES);
        events.once('error', () => { broke = true; });
        events.on('data', count);
        await pipeline(answer.body, events, res);
      } else {
        answer.body.on('data', count);
        await pipeline(answer.body, res);
      }
      return { status, bytes };
    } catch {
      clearTimeout(timer);
      // Recorded as 499, as the gateway records a client that left.
      if (clientLeft) return { status: CLIENT_CLOSED, bytes };
      // Mid-answer, the server broke off (or sent an event past its limit): sendFailure cuts the connection.
      if (res.headersSent) return { failure: 'server_error', bytes };
      if (timedOut) return { failure: 'timeout', bytes };
      return { failure: 'unreachable', bytes };
    } finally {
      res.off('close', left);
    }
  }

  /**
   * One request of the gateway's own to the server (the federated /mcp: a
   * session begun, a list read, a notification passed on), its answer read
   * whole up to MAX_HELD_BYTES; a failure when there is none to read.
   */
  async exchange(method: 'POST' | 'DELETE', upstream: UpstreamSession | undefined, message?: unknown): Promise<Exchanged | McpFailure> {
    const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
    if (message !== undefined) headers['content-type'] = 'application/json';
    if (upstream !== undefined) sessionHeaders(headers, upstream);
    Object.assign(headers, this.headers);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.timeoutMs);
    try {
      const body = message === undefined ? undefined : JSON.stringify(message);
      const answer = await this.pool.request({ path: this.path, method, headers, body, signal: abort.signal });
      const text = await readText(answer.body, MAX_HELD_BYTES);
      if (text === undefined) return 'server_error';
      return { status: answer.statusCode, headers: answer.headers, text };
    } catch {
      return abort.signal.aborted ? 'timeout' : 'unreachable';
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** The gateway's own session with the server, in place of whatever the client sent. */
function sessionHeaders(headers: Record<string, string>, upstream: UpstreamSession): void {
  delete headers['last-event-id'];
  delete headers['mcp-session-id'];
  if (upstream.session !== undefined) headers['mcp-session-id'] = upstream.session;
  headers['mcp-protocol-version'] = upstream.version;
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
