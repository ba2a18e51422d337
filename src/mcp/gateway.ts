// /mcp/<server>: one MCP server per path (relayed over HTTP, or a stdio
// program the gateway starts), and /mcp, every Streamable HTTP server a key
// may use behind one endpoint (federation/), under the gateway's keys (or an
// organisation's access tokens) and each key's MCP lists. In order: the key (a 401 as on every route),
// the server (one the key may not use is as absent as one not configured:
// 404), the POST body (JSON-RPC, at most server.bodyLimit) and its tool calls
// (one the key may not make is answered here as an unknown tool; one over the
// key's or org's limits, as a rate-limited call: src/mcp/limits.ts), then the
// relay. One access line and one count per request, whatever its end; and
// for each tools/call, what tool-calls.ts leaves (record, count, span, audit).
//
//   mcp: { servers: { github: { url: https://mcp.example.com/mcp, headers: { Authorization: "Bearer ${GITHUB_TOKEN}" } } } }
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { UsageRecord } from '../spend/record';
import type { Tracing } from '../tracing/tracing';
import type { KeyIndex, Principal } from '../auth/keys';
import type { GatewayConfig } from '../config/schema';
import type { RedisClient } from '../contract/types';
import type { StoreHealthNotes } from '../contract/plugin';
import type { LimiterPools } from '../limiters/pools';
import { retryAfterSeconds } from '../admission/refusals';
import { requestIdOf } from '../pipeline/context';
import { AccessTable, type McpAccess } from './access';
import { admitCalls } from './admit-calls';
import { notProcessed, sendFailure, unknownTool, type McpFailure } from './errors';
import { McpLimits } from './limits';
import { isRefusedCall, listRequestIds, readPost, type McpMessage, type McpPost } from './messages';
import { mcpCounter, type McpCounter, type McpOutcome } from './metrics';
import { readMcpBody } from './body';
import { FEDERATED, McpExchange, OUTCOME, sendAnswer } from './exchange';
import { McpServerRelay, type McpRelay, type RelayEnd } from './relay';
import { McpStdioRelay } from './stdio-relay';
import { Federation } from './federation/federation';
import { serveFederated, type FederatedDeps } from './federation/entry';
import { MemorySessionStore, RedisSessionStore } from './federation/sessions';
import { HEADER_MISMATCH, sendError } from './federation/answers';
import { headerMismatch } from './modern';
import { bindingOf } from './session-binding';
import { packageVersion } from '../plumbing/version';
import { ToolCalls, toolCallsOf, type ToolCall } from './tool-calls';
import { mcpIdentity, type McpIdentity } from './oauth/identity';
import type { Pipeline } from '../pipeline/pipeline';
import { guardCalls, guardResumed } from './call-guard';
import type { CallRelay } from './result-hold';

export interface McpDeps {
  logger: Logger;
  metrics?: Registry;
  /** Where each tool call's usage record goes. */
  spend?: { add(record: UsageRecord): void };
  tracing?: Tracing;
  /** The process's limiters (src/limiters/): the tool-call limits count there. */
  limiters: LimiterPools;
  /** The Redis connection, when the config names redis (the federated endpoint's sessions live there too), and its health notes. */
  redis?: RedisClient;
  storeHealth?: StoreHealthNotes;
  /** The config's plugin chain: its tool hooks guard every tool call (docs/plugins.md). */
  pipeline?: Pipeline;
}

/** The most of a tool call's answer held when the config names no mcp.maxResultBytes. */
const DEFAULT_MAX_RESULT_BYTES = 16 * 1024 * 1024;

export class McpGateway {
  private readonly servers = new Map<string, McpRelay>();
  private readonly access: AccessTable;
  private readonly limits: McpLimits;
  private readonly count: McpCounter;
  private readonly toolCalls: ToolCalls;
  private readonly bodyLimit: number;
  private readonly federation: Federation;
  private readonly maxResultBytes: number;
  private readonly federated: FederatedDeps;
  /** Who is calling: a key, or with mcp.oauth an access token; its metadata, served on the public listener. */
  readonly identity: McpIdentity;

  constructor(config: Pick<GatewayConfig, 'mcp' | 'orgs' | 'server' | 'redis'>, private readonly deps: McpDeps) {
    for (const [name, server] of Object.entries(config.mcp?.servers ?? {})) {
      this.servers.set(name, server.kind === 'stdio' ? new McpStdioRelay(name, server, deps) : new McpServerRelay(server));
    }
    this.access = new AccessTable(config.orgs);
    const redis = config.redis === undefined ? undefined : deps.redis;
    this.limits = new McpLimits(config, deps.limiters.source(redis, config.redis?.failMode ?? 'open'), redis && deps.storeHealth);
    this.count = mcpCounter(deps.metrics);
    this.toolCalls = new ToolCalls(deps);
    this.bodyLimit = config.server.bodyLimit;
    const idleMs = config.mcp?.sessionIdleMs ?? 3_600_000;
    const store = redis === undefined ? new MemorySessionStore(idleMs) : new RedisSessionStore(redis, config.redis!.prefix, idleMs);
    // The federated /mcp holds the servers relayed over HTTP; a stdio server is reached at its own path only.
    const relayed = new Map([...this.servers].flatMap(([name, relay]) => (relay instanceof McpServerRelay ? [[name, relay] as const] : [])));
    this.federation = new Federation(relayed, store, deps.logger, { name: 'sluice', version: packageVersion() });
    this.identity = mcpIdentity(config.mcp?.oauth, config.orgs);
    this.maxResultBytes = config.mcp?.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
    this.federated = {
      federation: this.federation, limits: this.limits, pipeline: deps.pipeline, bodyLimit: this.bodyLimit, maxResultBytes: this.maxResultBytes,
      failWith: (exchange, res, failure) => this.failWith(exchange, res, failure),
    };
  }

  /**
   * Serves one request at the federated /mcp: every server the key may use
   * behind one endpoint (federation/federation.ts). A key that may use none
   * gets the 404 of an absent path.
   */
  handleFederated(req: IncomingMessage, res: ServerResponse, keys: KeyIndex, fail: (err: unknown) => void): void {
    this.open(req, res, FEDERATED, undefined, keys, fail, (exchange, principal) => {
      const access = this.access.of(principal);
      if (this.federation.usable(access).length === 0) return Promise.resolve(this.failWith(exchange, res, 'not_found'));
      return this.serveFederated(exchange, req, res, access).catch((err: Error) => {
        this.deps.logger.warn({ requestId: exchange.id, err: err.message }, 'mcp federated request failed');
        this.failWith(exchange, res, 'server_error');
      });
    });
  }

  /**
   * The request's exchange, logged and counted once the response has closed
   * and the serving has said how it ended, whichever comes last; then the
   * caller, a key or with mcp.oauth an access token (`resource`: the server
   * whose path it came to, none for /mcp), and `serve` with it. A refused
   * caller goes to `fail` (the error middleware's 401, or a token's 403 or 503).
   */
  private open(req: IncomingMessage, res: ServerResponse, server: string | undefined, resource: string | undefined, keys: KeyIndex, fail: (err: unknown) => void,
    serve: (exchange: McpExchange, principal: Principal) => Promise<void>): void {
    const exchange = new McpExchange(requestIdOf(req, res), server, req.method, req.headers, res);
    const closed = new Promise<void>((resolve) => {
      if (exchange.closed.aborted) resolve();
      else exchange.closed.addEventListener('abort', () => resolve(), { once: true });
    });
    void closed.then(() => exchange.served).then(() => this.finish(exchange, res));
    let caller: Principal | Promise<Principal>;
    try {
      caller = this.identity.identify(keys, req, resource);
    } catch (err) {
      return this.refuseCaller(exchange, err, fail);
    }
    const go = (principal: Principal): Promise<void> => {
      exchange.principal = principal;
      return serve(exchange, principal);
    };
    // A key is known at once; an access token may wait for its issuer's keys.
    exchange.served = caller instanceof Promise ? caller.then(go, (err: unknown) => this.refuseCaller(exchange, err, fail)) : go(caller);
  }

  private serveFederated(exchange: McpExchange, req: IncomingMessage, res: ServerResponse, access: McpAccess): Promise<void> {
    return serveFederated(this.federated, exchange, req, res, access);
  }

  /** Serves one request at /mcp/`name`; `fail` gets a refused caller (the error middleware's 401, or an access token's 403 or 503). */
  handle(req: IncomingMessage, res: ServerResponse, name: string, keys: KeyIndex, fail: (err: unknown) => void): void {
    this.open(req, res, this.servers.has(name) ? name : undefined, name, keys, fail, (exchange, principal) => this.admit(exchange, req, res, name, principal, fail));
  }

  private admit(exchange: McpExchange, req: IncomingMessage, res: ServerResponse, name: string, principal: Principal, fail: (err: unknown) => void): Promise<void> {
    const relay = this.servers.get(name);
    const access = this.access.of(principal);
    if (relay === undefined || !access.server(name)) {
      const refusal = relay === undefined ? undefined : this.identity.insufficientScope(principal, name);
      if (refusal !== undefined) return Promise.resolve(this.refuseCaller(exchange, refusal, fail));
      return Promise.resolve(this.failWith(exchange, res, 'not_found'));
    }
    return this.serve(exchange, req, res, name, relay, access).catch(() => this.failWith(exchange, res, 'server_error'));
  }

  /** The caller refused before anything else: 401 (or an access token's 403), or 503 when its token could not be checked. */
  private refuseCaller(exchange: McpExchange, err: unknown, fail: (err: unknown) => void): void {
    exchange.outcome = (err as { status?: number } | undefined)?.status === 503 ? 'identity_unavailable' : 'unauthorized';
    fail(err);
  }

  private async serve(exchange: McpExchange, req: IncomingMessage, res: ServerResponse, name: string, relay: McpRelay, access: McpAccess): Promise<void> {
    // A server's session bound to the key that began it (a stdio server's sessions are the gateway's own, bound where they are kept):
    // one another caller began, or one the gateway never gave, is as unknown as an ended one.
    const binding = relay instanceof McpServerRelay ? bindingOf(req, name) : { wrap: (id: string) => id };
    if (binding === undefined) return this.failWith(exchange, res, 'unknown_session');
    let body: Buffer | undefined;
    let json: unknown;
    if (req.method === 'POST') {
      const read = await readMcpBody(req, this.bodyLimit);
      if (typeof read === 'string') return this.failWith(exchange, res, read);
      if (read === undefined) return void (exchange.outcome = 'client_closed');
      body = read.bytes;
      exchange.bytesIn = body.length;
      json = read.json;
      const post = readPost(read.json);
      if (post === undefined) return this.failWith(exchange, res, 'invalid');
      exchange.post = post;
      const mismatch = post.batch ? undefined : headerMismatch(req, read.json);
      if (mismatch !== undefined) {
        exchange.outcome = 'invalid';
        return sendError(res, 400, post.messages[0].id ?? null, HEADER_MISMATCH, mismatch);
      }
      exchange.calls = toolCallsOf(post, name, access);
      const call = post.messages.find((m) => m.method === 'tools/call');
      if (call?.tool !== undefined && access.tool(name, call.tool)) exchange.tool = call.tool;
      if (post.messages.some((m) => isRefusedCall(m, name, access))) {
        return this.answerWhole(exchange, res, post, 'refused', (m) => (isRefusedCall(m, name, access) ? unknownTool(m.id!, m.tool) : undefined));
      }
    }
    const ids = exchange.post === undefined ? undefined : listRequestIds(exchange.post);
    const filter = ids === undefined ? undefined : { ids, allowed: (tool: string) => access.tool(name, tool) };
    let calls: CallRelay | undefined;
    if (exchange.post?.messages.some((m) => m.method === 'tools/call')) {
      // The plugins' tool hooks: arguments checked (and rewritten) before anything is counted or sent on.
      const signal = exchange.closed;
      const who = { requestId: exchange.id, principal: exchange.principal!, server: name, signal };
      const guard = await guardCalls(this.deps.pipeline, who, json, exchange.post, this.maxResultBytes, ids!.size > 0 ? filter : undefined);
      // The client left while a hook ran: nothing is sent on.
      if (signal.aborted) return void (exchange.outcome = 'client_closed');
      if ('failure' in guard) return this.failWith(exchange, res, guard.failure);
      if ('answer' in guard) return sendAnswer(exchange, res, guard.answer, 'refused');
      body = guard.body ?? body;
      calls = guard.relay;
      const admitted = await admitCalls(this.limits, exchange.principal!, name, exchange.post);
      if (!admitted.admitted) return this.answerWhole(exchange, res, exchange.post, admitted.outcome, admitted.answerOf, admitted.retryAfterMs);
      // The client left while its calls were counted: they are not made, and their counts go back.
      if (res.destroyed) {
        admitted.undo();
        return void (exchange.outcome = 'client_closed');
      }
    } else if (req.method === 'GET') {
      calls = guardResumed(this.deps.pipeline, this.maxResultBytes);
    }
    const end: RelayEnd = await relay.relay(req, res, body, filter, { key: exchange.principal!.id, json }, undefined, relay instanceof McpServerRelay ? binding : undefined, calls);
    exchange.bytesOut = end.bytes ?? 0;
    if ('failure' in end) return this.failWith(exchange, res, end.failure);
    if (!('status' in end)) return this.failWith(exchange, res, 'server_error');
    exchange.outcome = end.status === 499 ? 'client_closed' : calls?.exceeded ? 'too_large' : end.outcome ?? (end.status < 400 ? 'ok' : 'rejected');
  }

  /**
   * A POST the gateway answers itself, nothing of it sent on: a tool call the
   * key may not make (answered as the tools specification answers an unknown
   * tool), or one over a limit. As JSON-RPC answers under HTTP 200, so a
   * client gets each request's error by its id. In a batch (2025-03-26's
   * transport) the whole batch is answered here: the refused calls by
   * `answerOf`, the other requests with an error asking to send them again on
   * their own. A limited call's wait also goes in Retry-After.
   */
  private answerWhole(exchange: McpExchange, res: ServerResponse, post: McpPost, outcome: McpOutcome, answerOf: (m: McpMessage) => object | undefined, retryAfterMs?: number): void {
    const answers = post.messages.filter((m) => m.id !== undefined && m.method !== undefined).map((m) => answerOf(m) ?? notProcessed(m.id!));
    sendAnswer(exchange, res, post.batch ? answers : answers[0], outcome, retryAfterMs === undefined ? undefined : retryAfterSeconds(retryAfterMs));
  }

  private failWith(exchange: McpExchange, res: ServerResponse, failure: McpFailure): void {
    exchange.outcome = OUTCOME[failure];
    if (failure === 'too_large') res.setHeader('connection', 'close'); // the rest of the body is not read
    exchange.bytesOut += sendFailure(res, failure);
  }

  private finish(exchange: McpExchange, res: ServerResponse): void {
    const method = exchange.method();
    const status = exchange.outcome === 'client_closed' ? 499 : res.statusCode;
    const durationMs = performance.now() - exchange.started;
    this.count(exchange.server ?? 'unknown', method, exchange.outcome);
    this.deps.logger.info({
      requestId: exchange.id,
      keyId: exchange.principal?.id,
      org: exchange.principal?.org ?? undefined,
      protocol: 'mcp',
      server: exchange.server,
      method,
      tool: exchange.tool,
      status,
      outcome: exchange.outcome,
      durationMs: Math.round(durationMs * 100) / 100,
    }, 'request');
    // Calls are known once the body is read, by then the key and the server are too.
    if (exchange.calls.length === 0 || exchange.principal === undefined || exchange.server === undefined) return;
    this.toolCalls.finish({
      requestId: exchange.id, principal: exchange.principal, server: exchange.server, calls: exchange.calls, outcome: exchange.outcome, status,
      startTime: performance.timeOrigin + exchange.started, durationMs, bytesIn: exchange.bytesIn, bytesOut: exchange.bytesOut, headers: exchange.headers,
    });
  }

  close(): Promise<void> {
    return Promise.allSettled([...this.servers.values()].map((s) => s.close())).then(() => undefined);
  }
}
