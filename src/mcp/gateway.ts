// /mcp/<server>: one Streamable HTTP MCP server per path, under the gateway's
// keys and each key's MCP lists. In order: the key (a 401 as on every route),
// the server (one the key may not use is as absent as one not configured:
// 404), the POST body (JSON-RPC, at most server.bodyLimit) and its tool calls
// (one the key may not make is answered here as an unknown tool; one over the
// key's or org's limits, as a rate-limited call: src/mcp/limits.ts), then the
// relay. One access line and one count per request, whatever its end.
//
//   mcp: { servers: { github: { url: https://mcp.example.com/mcp, headers: { Authorization: "Bearer ${GITHUB_TOKEN}" } } } }
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { authenticate, authorizationOf, type KeyIndex, type Principal } from '../auth/keys';
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
import { isRefusedCall, listRequestIds, methodLabel, readPost, type McpMessage, type McpPost } from './messages';
import { mcpCounter, type McpCounter, type McpOutcome } from './metrics';
import { readMcpBody } from './body';
import { McpServerRelay, type RelayEnd } from './relay';

export interface McpDeps {
  logger: Logger;
  metrics?: Registry;
  /** The process's limiters (src/limiters/): the tool-call limits count there. */
  limiters: LimiterPools;
  /** The Redis connection, when the config names redis, and its health notes. */
  redis?: RedisClient;
  storeHealth?: StoreHealthNotes;
}

/** What one MCP request did, for its access line and its count: written here, read when the response closes. */
class McpExchange {
  readonly started = performance.now();
  principal?: Principal;
  post?: McpPost;
  /** The tool of a tools/call, when the key may call it (a name it may not call is the client's text: not logged). */
  tool?: string;
  outcome: McpOutcome = 'ok';

  constructor(readonly id: string, readonly server: string | undefined, private readonly httpMethod: string | undefined) {}

  /** The metrics label: the message's method; a GET (the server's own stream) or a DELETE (the session's end) says which it is. */
  method(): string {
    if (this.post !== undefined) return methodLabel(this.post);
    return this.httpMethod === 'GET' ? 'stream' : this.httpMethod === 'DELETE' ? 'session_end' : 'other';
  }
}

const OUTCOME: Record<McpFailure, McpOutcome> = {
  not_found: 'not_found', parse: 'invalid', invalid: 'invalid', too_large: 'too_large', unsupported_media_type: 'invalid',
  timeout: 'timeout', unreachable: 'unreachable', server_error: 'server_error',
};

export class McpGateway {
  private readonly servers = new Map<string, McpServerRelay>();
  private readonly access: AccessTable;
  private readonly limits: McpLimits;
  private readonly count: McpCounter;
  private readonly bodyLimit: number;

  constructor(config: Pick<GatewayConfig, 'mcp' | 'orgs' | 'server' | 'redis'>, private readonly deps: McpDeps) {
    for (const [name, server] of Object.entries(config.mcp?.servers ?? {})) this.servers.set(name, new McpServerRelay(server));
    this.access = new AccessTable(config.orgs);
    const redis = config.redis === undefined ? undefined : deps.redis;
    this.limits = new McpLimits(config, deps.limiters.source(redis, config.redis?.failMode ?? 'open'), redis && deps.storeHealth);
    this.count = mcpCounter(deps.metrics);
    this.bodyLimit = config.server.bodyLimit;
  }

  /** Serves one request at /mcp/`name`; `fail` gets a refused key (the error middleware's 401). */
  handle(req: IncomingMessage, res: ServerResponse, name: string, keys: KeyIndex, fail: (err: unknown) => void): void {
    const exchange = new McpExchange(requestIdOf(req, res), this.servers.has(name) ? name : undefined, req.method);
    const closed = new Promise<void>((resolve) => res.once('close', resolve));
    let served: Promise<void> = Promise.resolve();
    // Logged and counted once the response has closed and the relay has said how it ended, whichever comes last.
    void closed.then(() => served).then(() => this.finish(exchange, res));
    try {
      exchange.principal = authenticate(keys, authorizationOf(req));
    } catch (err) {
      exchange.outcome = 'unauthorized';
      return fail(err);
    }
    const relay = this.servers.get(name);
    const access = this.access.of(exchange.principal);
    if (relay === undefined || !access.server(name)) return this.failWith(exchange, res, 'not_found');
    served = this.serve(exchange, req, res, name, relay, access).catch(() => this.failWith(exchange, res, 'server_error'));
  }

  private async serve(exchange: McpExchange, req: IncomingMessage, res: ServerResponse, name: string, relay: McpServerRelay, access: McpAccess): Promise<void> {
    let body: Buffer | undefined;
    if (req.method === 'POST') {
      const read = await readMcpBody(req, this.bodyLimit);
      if (typeof read === 'string') return this.failWith(exchange, res, read);
      if (read === undefined) return void (exchange.outcome = 'client_closed');
      body = read.bytes;
      const post = readPost(read.json);
      if (post === undefined) return this.failWith(exchange, res, 'invalid');
      exchange.post = post;
      const call = post.messages.find((m) => m.method === 'tools/call');
      if (call?.tool !== undefined && access.tool(name, call.tool)) exchange.tool = call.tool;
      if (post.messages.some((m) => isRefusedCall(m, name, access))) {
        return this.answerWhole(exchange, res, post, 'refused', (m) => (isRefusedCall(m, name, access) ? unknownTool(m.id!, m.tool) : undefined));
      }
      const admitted = await admitCalls(this.limits, exchange.principal!, name, post);
      if (!admitted.admitted) return this.answerWhole(exchange, res, post, admitted.outcome, admitted.answerOf, admitted.retryAfterMs);
      // The client left while its calls were counted: they are not made, and their counts go back.
      if (res.destroyed) {
        admitted.undo();
        return void (exchange.outcome = 'client_closed');
      }
    }
    const ids = exchange.post === undefined ? undefined : listRequestIds(exchange.post);
    const end: RelayEnd = await relay.relay(req, res, body, ids === undefined ? undefined : { ids, allowed: (tool) => access.tool(name, tool) });
    if ('failure' in end) return this.failWith(exchange, res, end.failure);
    exchange.outcome = end.status === 499 ? 'client_closed' : end.status < 400 ? 'ok' : 'rejected';
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
    exchange.outcome = outcome;
    const answers = post.messages.filter((m) => m.id !== undefined && m.method !== undefined).map((m) => answerOf(m) ?? notProcessed(m.id!));
    const text = JSON.stringify(post.batch ? answers : answers[0]);
    const head: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
    if (retryAfterMs !== undefined) head['retry-after'] = retryAfterSeconds(retryAfterMs);
    res.writeHead(200, head);
    res.end(text);
  }

  private failWith(exchange: McpExchange, res: ServerResponse, failure: McpFailure): void {
    exchange.outcome = OUTCOME[failure];
    if (failure === 'too_large') res.setHeader('connection', 'close'); // the rest of the body is not read
    sendFailure(res, failure);
  }

  private finish(exchange: McpExchange, res: ServerResponse): void {
    const method = exchange.method();
    this.count(exchange.server ?? 'unknown', method, exchange.outcome);
    this.deps.logger.info({
      requestId: exchange.id,
      keyId: exchange.principal?.id,
      org: exchange.principal?.org ?? undefined,
      protocol: 'mcp',
      server: exchange.server,
      method,
      tool: exchange.tool,
      status: exchange.outcome === 'client_closed' ? 499 : res.statusCode,
      outcome: exchange.outcome,
      durationMs: Math.round((performance.now() - exchange.started) * 100) / 100,
    }, 'request');
  }

  close(): Promise<void> {
    return Promise.allSettled([...this.servers.values()].map((s) => s.close())).then(() => undefined);
  }
}
