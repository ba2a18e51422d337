// /mcp/<server>: one Streamable HTTP MCP server per path, under the gateway's
// keys and each key's MCP lists. In order: the key (a 401 as on every route),
// the server (one the key may not use is as absent as one not configured:
// 404), the POST body (JSON-RPC, at most server.bodyLimit) and its tool calls
// (one the key may not make is answered here as an unknown tool), then the
// relay. One access line and one count per request, whatever its end.
//
//   mcp: { servers: { github: { url: https://mcp.example.com/mcp, headers: { Authorization: "Bearer ${GITHUB_TOKEN}" } } } }
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { authenticate, authorizationOf, type KeyIndex, type Principal } from '../auth/keys';
import type { GatewayConfig } from '../config/schema';
import { requestIdOf } from '../pipeline/context';
import { AccessTable, type McpAccess } from './access';
import { sendFailure, unknownTool, type McpFailure } from './errors';
import { isRefusedCall, listRequestIds, methodLabel, readPost, type McpPost } from './messages';
import { mcpCounter, type McpCounter, type McpOutcome } from './metrics';
import { readMcpBody } from './body';
import { McpServerRelay, type RelayEnd } from './relay';
import type { Pipeline } from '../pipeline/pipeline';
import { guardCalls, guardResumed } from './call-guard';
import type { CallRelay } from './result-hold';

export interface McpDeps {
  logger: Logger;
  metrics?: Registry;
  /** The config's plugin chain: its tool hooks guard every tool call (docs/plugins.md). */
  pipeline?: Pipeline;
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

/** The most of a tool call's answer held when the config names no mcp.maxResultBytes. */
const DEFAULT_MAX_RESULT_BYTES = 16 * 1024 * 1024;

/** Aborted once the response has closed: a tool hook that waits stops waiting for a client that left. */
function closedSignal(res: ServerResponse): AbortSignal {
  const abort = new AbortController();
  if (res.closed) abort.abort();
  else res.once('close', () => abort.abort());
  return abort.signal;
}

export class McpGateway {
  private readonly servers = new Map<string, McpServerRelay>();
  private readonly access: AccessTable;
  private readonly count: McpCounter;
  private readonly bodyLimit: number;
  private readonly maxResultBytes: number;

  constructor(config: Pick<GatewayConfig, 'mcp' | 'orgs' | 'server'>, private readonly deps: McpDeps) {
    for (const [name, server] of Object.entries(config.mcp?.servers ?? {})) this.servers.set(name, new McpServerRelay(server));
    this.access = new AccessTable(config.orgs);
    this.count = mcpCounter(deps.metrics);
    this.bodyLimit = config.server.bodyLimit;
    this.maxResultBytes = config.mcp?.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
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
    let json: unknown;
    if (req.method === 'POST') {
      const read = await readMcpBody(req, this.bodyLimit);
      if (typeof read === 'string') return this.failWith(exchange, res, read);
      if (read === undefined) return void (exchange.outcome = 'client_closed');
      body = read.bytes;
      json = read.json;
      const post = readPost(read.json);
      if (post === undefined) return this.failWith(exchange, res, 'invalid');
      exchange.post = post;
      const call = post.messages.find((m) => m.method === 'tools/call');
      if (call?.tool !== undefined && access.tool(name, call.tool)) exchange.tool = call.tool;
      if (post.messages.some((m) => isRefusedCall(m, name, access))) return this.refuse(exchange, res, post, name, access);
    }
    const ids = exchange.post === undefined ? undefined : listRequestIds(exchange.post);
    const lists = ids === undefined ? undefined : { ids, allowed: (tool: string) => access.tool(name, tool) };
    let calls: CallRelay | undefined;
    if (exchange.post?.messages.some((m) => m.method === 'tools/call')) {
      const signal = closedSignal(res);
      const who = { requestId: exchange.id, principal: exchange.principal!, server: name, signal };
      const guard = await guardCalls(this.deps.pipeline, who, json, exchange.post, this.maxResultBytes, ids!.size > 0 ? lists : undefined);
      // The client left while a hook ran: nothing is sent on.
      if (signal.aborted) return void (exchange.outcome = 'client_closed');
      if ('failure' in guard) return this.failWith(exchange, res, guard.failure);
      if ('answer' in guard) return this.answer(exchange, res, guard.answer);
      body = guard.body ?? body;
      calls = guard.relay;
    } else if (req.method === 'GET') {
      calls = guardResumed(this.deps.pipeline, this.maxResultBytes);
    }
    const end: RelayEnd = await relay.relay(req, res, body, lists, calls);
    if ('failure' in end) return this.failWith(exchange, res, end.failure);
    exchange.outcome = end.status === 499 ? 'client_closed' : calls?.exceeded ? 'too_large' : end.status < 400 ? 'ok' : 'rejected';
  }

  /**
   * A tool call the key may not make, answered as the tools specification
   * answers an unknown tool, and never sent on. In a batch (2025-03-26's
   * transport) the whole batch is answered here: the refused calls so, the
   * other requests with an error asking to send them again on their own.
   */
  private refuse(exchange: McpExchange, res: ServerResponse, post: McpPost, name: string, access: McpAccess): void {
    const answers = post.messages.filter((m) => m.id !== undefined && m.method !== undefined).map((m) => (isRefusedCall(m, name, access)
      ? unknownTool(m.id!, m.tool)
      : { jsonrpc: '2.0', id: m.id, error: { code: -32000, message: 'Not processed: send this request again on its own.' } }));
    this.answer(exchange, res, post.batch ? answers : answers[0]);
  }

  /** The gateway's own JSON-RPC answer to a POST whose calls it refused (nothing was sent on). */
  private answer(exchange: McpExchange, res: ServerResponse, answer: unknown): void {
    exchange.outcome = 'refused';
    const text = JSON.stringify(answer);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
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
