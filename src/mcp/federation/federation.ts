// The federated /mcp: one MCP endpoint for every server a key may use. The
// gateway is the client's MCP server here: it answers initialize itself,
// keeps the session (sessions.ts), and holds a session of its own with each
// server, begun the first time the client's session needs that server.
// Lists are merged under "<server>__<name>" (names.ts, lists.ts); a tool
// call or a prompt goes to its server under its own name and its answer
// (an event stream with its progress, or JSON) is relayed as it arrives; a
// resource is read from the first server that has it.
//
//   POST /mcp {"method":"tools/call","params":{"name":"github__search_code",...}}  ->  github: tools/call search_code
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { McpAccess } from '../access';
import { unknownTool, type McpFailure } from '../errors';
import type { JsonRpcId } from '../messages';
import { isModern, statedVersion } from '../modern';
import type { McpServerRelay } from '../relay';
import type { Guarded } from '../call-guard';
import type { CallRelay } from '../result-hold';
import { accepted, sendJson, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, SERVER_ERROR, SESSION_NOT_FOUND, sendError, sendResult, UNSUPPORTED_VERSION } from './answers';
import { LISTS, mergedPage } from './lists';
import { decodeCursor, encodeCursor, prefixed, splitName } from './names';
import { isSessionId, newSessionId, type FederatedSession, type SessionStore, type UpstreamState } from './sessions';
import { begin, end, notify, request, type RpcEnd } from './upstream-rpc';

/** The versions the federated endpoint speaks, newest first: the session-based revisions. */
export const FEDERATED_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

/** What the gateway learns of one request here, for its access line and its count. */
export interface FederatedNote {
  /** The server a call or a prompt went to. */
  server?: string;
  /** The tool of a tools/call, when the key may call it. */
  tool?: string;
  failure?: McpFailure;
  refused?: boolean;
  /** A tool call over one of the key's limits, or whose limits could not be checked. */
  limited?: 'limited' | 'limiter_unavailable';
  /** A tool's answer past mcp.maxResultBytes, answered with an error in its place. */
  exceeded?: boolean;
  /** The status of a relayed answer (499: the client left), and the body's bytes the client was sent. */
  status?: number;
  bytes?: number;
}

export interface FederatedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  owner: string;
  access: McpAccess;
  message: Record<string, unknown>;
  bytes: Buffer;
  note: FederatedNote;
  /** A tool call against the key's limits: undefined when admitted, else what to answer and when to try again. */
  admit(server: string, tool: string, id: JsonRpcId): Promise<LimitRefusal | undefined>;
  /** A tool call (as its server will get it) under the plugins' tool hooks: refused, or how to send it and hold its answer. */
  guard(server: string, message: Record<string, unknown>): Promise<Guarded>;
}

export interface LimitRefusal {
  outcome: 'limited' | 'limiter_unavailable';
  answer: object;
  retryAfterSeconds: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export class Federation {
  constructor(
    private readonly servers: ReadonlyMap<string, McpServerRelay>,
    private readonly store: SessionStore,
    private readonly logger: Logger,
    private readonly serverInfo: { name: string; version: string },
  ) {}

  /** The servers `access` may use, in the config's order. */
  usable(access: McpAccess): string[] {
    return [...this.servers.keys()].filter((name) => access.server(name));
  }

  async post(r: FederatedRequest): Promise<void> {
    const { message, res } = r;
    const id = message.id as JsonRpcId | undefined;
    const method = message.method as string | undefined;
    const version = statedVersion(r.req, message);
    if (method !== undefined && id !== undefined && isModern(version)) {
      return sendError(res, 400, id, UNSUPPORTED_VERSION, 'Unsupported protocol version: this endpoint speaks the session-based revisions; begin with initialize.', { supported: FEDERATED_VERSIONS, requested: version });
    }
    if (method === 'initialize') return this.initialize(r, id);
    const session = await this.session(r.req, r.res, r.owner);
    if (session === undefined) return;
    if (method === undefined) return accepted(res); // the client's answer to a server's request: none is relayed here
    if (id === undefined) return this.notification(r, session, method);
    const params = isObject(message.params) ? message.params : {};
    if (method === 'ping') return sendResult(res, id, {});
    if (Object.hasOwn(LISTS, method)) return this.list(r, session, id, method, params);
    if (method === 'tools/call' || method === 'prompts/get') return this.route(r, session, id, method, params);
    if (method === 'resources/read') return this.read(r, session, id, params);
    sendError(res, 200, id, METHOD_NOT_FOUND, `Method not found: ${method.slice(0, 100)}`);
  }

  /** DELETE /mcp: the session ends here and at every server it used. */
  async end(req: IncomingMessage, res: ServerResponse, owner: string): Promise<void> {
    const session = await this.session(req, res, owner);
    if (session === undefined) return;
    await this.store.delete(session.id);
    await Promise.allSettled(Object.entries(session.upstreams).map(([name, up]) => end(this.servers.get(name)!, up)));
    res.writeHead(200, { 'content-length': 0 });
    res.end();
  }

  private async initialize(r: FederatedRequest, id: JsonRpcId | undefined): Promise<void> {
    if (id === undefined) return sendError(r.res, 400, null, INVALID_REQUEST, 'initialize is a request: give it an id.');
    if (r.req.headers['mcp-session-id'] !== undefined) return sendError(r.res, 400, id, INVALID_REQUEST, 'initialize begins a session: send it without Mcp-Session-Id.');
    const params = isObject(r.message.params) ? r.message.params : {};
    const asked = typeof params.protocolVersion === 'string' ? params.protocolVersion : '';
    const version = FEDERATED_VERSIONS.includes(asked) ? asked : FEDERATED_VERSIONS[0];
    const session: FederatedSession = { id: newSessionId(), owner: r.owner, version, clientInfo: params.clientInfo ?? {}, capabilities: params.capabilities ?? {}, upstreams: {} };
    await this.store.create(session);
    sendResult(r.res, id, {
      protocolVersion: version,
      // Lists change as servers change, but the gateway sends no notification of it: no listChanged, no subscriptions.
      capabilities: { tools: {}, prompts: {}, resources: {} },
      serverInfo: this.serverInfo,
      instructions: 'Tools and prompts of several MCP servers, each named <server>__<name>.',
    }, { 'mcp-session-id': session.id });
  }

  /** The client's session; undefined once its refusal is sent (none given: 400; unknown, ended, or another key's: 404). */
  private async session(req: IncomingMessage, res: ServerResponse, owner: string): Promise<FederatedSession | undefined> {
    const id = req.headers['mcp-session-id'];
    if (typeof id !== 'string') {
      sendError(res, 400, null, SERVER_ERROR, 'Bad Request: send the Mcp-Session-Id header that initialize answered, or begin a session with initialize.');
      return undefined;
    }
    const session = isSessionId(id) ? await this.store.get(id) : undefined;
    if (session === undefined || session.owner !== owner) {
      sendError(res, 404, null, SESSION_NOT_FOUND, 'Session not found: begin a new session with initialize.');
      return undefined;
    }
    return session;
  }

  /** The gateway's session with `server` in the client's session, begun now if there is none. */
  private async upstream(session: FederatedSession, server: string): Promise<UpstreamState | McpFailure> {
    const known = session.upstreams[server];
    if (known !== undefined) return known;
    const begun = await begin(this.servers.get(server)!, session.version, session.clientInfo, session.capabilities);
    if (typeof begun === 'string') return begun;
    session.upstreams[server] = begun;
    await this.store.setUpstream(session.id, server, begun);
    return begun;
  }

  /** The gateway's session with `server` ended by the server: forgotten, so the next use begins another. */
  private async forget(session: FederatedSession, server: string): Promise<void> {
    delete session.upstreams[server];
    await this.store.setUpstream(session.id, server, undefined);
  }

  /** One request to `server` in the session, begun again once if the server had ended it. */
  private async ask(session: FederatedSession, server: string, method: string, params: unknown): Promise<RpcEnd> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const upstream = await this.upstream(session, server);
      if (typeof upstream === 'string') return upstream;
      const answer = await request(this.servers.get(server)!, upstream, method, params);
      if (answer !== 'gone') return answer;
      await this.forget(session, server);
    }
    return 'server_error';
  }

  private notification(r: FederatedRequest, session: FederatedSession, method: string): void {
    accepted(r.res);
    if (method === 'notifications/initialized') return;
    // A cancellation, or a change of the client's roots: to every server in the session (a server ignores a request id it does not know).
    for (const [name, upstream] of Object.entries(session.upstreams)) {
      notify(this.servers.get(name)!, upstream, method, r.message.params).catch((err: Error) => this.logger.debug({ server: name, err: err.message }, 'mcp notification not passed on'));
    }
  }

  private async list(r: FederatedRequest, session: FederatedSession, id: JsonRpcId, method: string, params: Record<string, unknown>): Promise<void> {
    const { field, capability } = LISTS[method];
    const servers = this.usable(r.access);
    const start = params.cursor === undefined ? undefined : decodeCursor(params.cursor);
    if (params.cursor !== undefined && (start === undefined || !servers.includes(start.server))) {
      return sendError(r.res, 200, id, INVALID_PARAMS, 'Invalid cursor: send back the nextCursor of an earlier page unchanged.');
    }
    const page = await mergedPage(servers, start, async (server, cursor) => {
      const upstream = await this.upstream(session, server);
      if (typeof upstream === 'string' || !upstream.capabilities.includes(capability)) return undefined;
      const answer = await this.ask(session, server, method, cursor === undefined ? undefined : { cursor });
      if (typeof answer === 'string' || answer.result === undefined) {
        this.logger.warn({ server, method, failure: typeof answer === 'string' ? answer : 'error' }, 'mcp server left out of a merged list');
        return undefined;
      }
      const items = Array.isArray(answer.result[field]) ? answer.result[field] as unknown[] : [];
      const next = typeof answer.result.nextCursor === 'string' ? answer.result.nextCursor : undefined;
      return { items: items.flatMap((item) => this.shown(r.access, server, method, item)), next };
    });
    sendResult(r.res, id, { [field]: page.items, ...(page.next === undefined ? {} : { nextCursor: encodeCursor(page.next) }) });
  }

  /** An item of a server's list as the key sees it: tools it may call and prompts under their prefixed names; resources as they are. */
  private shown(access: McpAccess, server: string, method: string, item: unknown): unknown[] {
    if (!isObject(item)) return [];
    if (method !== 'tools/list' && method !== 'prompts/list') return [item];
    if (typeof item.name !== 'string') return [];
    if (method === 'tools/list' && !access.tool(server, item.name)) return [];
    return [{ ...item, name: prefixed(server, item.name) }];
  }

  /** A tool call or a prompt: to its server, under its own name, the answer relayed as it comes. */
  private async route(r: FederatedRequest, session: FederatedSession, id: JsonRpcId, method: string, params: Record<string, unknown>): Promise<void> {
    const name = typeof params.name === 'string' ? params.name : undefined;
    const target = name === undefined ? undefined : splitName(name);
    const allowed = target !== undefined && this.servers.has(target.server) && r.access.server(target.server)
      && (method === 'prompts/get' || r.access.tool(target.server, target.name));
    if (!allowed) {
      r.note.refused = true;
      if (method === 'tools/call') return sendJson(r.res, 200, unknownTool(id, name));
      return sendError(r.res, 200, id, INVALID_PARAMS, `Unknown prompt: ${(name ?? '').slice(0, 200)}`);
    }
    r.note.server = target.server;
    const sent = { ...r.message, params: { ...params, name: target.name } };
    let body: Buffer = Buffer.from(JSON.stringify(sent));
    let calls: CallRelay | undefined;
    if (method === 'tools/call') {
      r.note.tool = target.name;
      // The plugins' tool hooks first (a refused call counts nothing), then the key's limits.
      const guarded = await r.guard(target.server, sent);
      if ('failure' in guarded) return sendError(r.res, 400, id, INVALID_REQUEST, 'The tool call cannot be checked: give it an object of arguments.');
      if ('answer' in guarded) {
        r.note.refused = true;
        return sendJson(r.res, 200, guarded.answer);
      }
      body = guarded.body ?? body;
      calls = guarded.relay;
      const refusal = await r.admit(target.server, target.name, id);
      if (refusal !== undefined) {
        r.note.limited = refusal.outcome;
        return sendJson(r.res, 200, refusal.answer, { 'retry-after': String(refusal.retryAfterSeconds) });
      }
    }
    const relay = this.servers.get(target.server)!;
    for (let attempt = 0; attempt < 2; attempt++) {
      const upstream = await this.upstream(session, target.server);
      if (typeof upstream === 'string') return void (r.note.failure = upstream);
      const relayed = await relay.relay(r.req, r.res, body, undefined, undefined, upstream, undefined, calls);
      r.note.bytes = relayed.bytes;
      r.note.exceeded = calls?.exceeded;
      if ('status' in relayed) return void (r.note.status = relayed.status);
      if ('failure' in relayed) return void (r.note.failure = relayed.failure);
      await this.forget(session, target.server);
    }
    r.note.failure = 'server_error';
  }

  /** resources/read: from the first server (in the config's order) that has the resource. */
  private async read(r: FederatedRequest, session: FederatedSession, id: JsonRpcId, params: Record<string, unknown>): Promise<void> {
    let last: RpcEnd | undefined;
    for (const server of this.usable(r.access)) {
      const upstream = await this.upstream(session, server);
      if (typeof upstream === 'string' || !upstream.capabilities.includes('resources')) continue;
      last = await this.ask(session, server, 'resources/read', params);
      if (typeof last !== 'string' && last.result !== undefined) {
        r.note.server = server;
        return sendResult(r.res, id, last.result);
      }
    }
    const error = last !== undefined && typeof last !== 'string' ? last.error : undefined;
    sendError(r.res, 200, id, error?.code ?? RESOURCE_NOT_FOUND, error?.message ?? 'Resource not found.', error?.data);
  }
}
