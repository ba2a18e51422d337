// A request at the federated /mcp, from its body to how it counts: the
// message read once (one JSON-RPC message: the session revisions have no
// batches), handed to the federation (federation.ts) with what it needs
// for a tool call (the plugins' tool hooks, then the key's limits), and
// what it did noted on the exchange for its access line, count and record.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { retryAfterSeconds } from '../../admission/refusals';
import type { Pipeline } from '../../pipeline/pipeline';
import type { McpAccess } from '../access';
import { readMcpBody } from '../body';
import { guardCalls } from '../call-guard';
import { limitedCall, UNAVAILABLE_RETRY_MS, uncheckedCall, type McpFailure } from '../errors';
import { FEDERATED, type McpExchange } from '../exchange';
import type { McpLimits } from '../limits';
import { readPost, type JsonRpcId } from '../messages';
import { sendError } from './answers';
import type { Federation, FederatedNote, LimitRefusal } from './federation';

export interface FederatedDeps {
  federation: Federation;
  limits: McpLimits;
  pipeline?: Pipeline;
  bodyLimit: number;
  maxResultBytes: number;
  failWith(exchange: McpExchange, res: ServerResponse, failure: McpFailure): void;
}

export async function serveFederated(d: FederatedDeps, exchange: McpExchange, req: IncomingMessage, res: ServerResponse, access: McpAccess): Promise<void> {
  const owner = exchange.principal!.id;
  if (req.method === 'GET') {
    // No stream of the gateway's own: the transport lets a server say so with a 405.
    exchange.outcome = 'rejected';
    res.setHeader('allow', 'POST, DELETE');
    return sendError(res, 405, null, -32000, 'Method not allowed: the federated endpoint offers no GET stream; send each message as a POST.');
  }
  if (req.method === 'DELETE') return d.federation.end(req, res, owner);
  const read = await readMcpBody(req, d.bodyLimit);
  if (typeof read === 'string') return d.failWith(exchange, res, read);
  if (read === undefined) return void (exchange.outcome = 'client_closed');
  const post = readPost(read.json);
  if (post === undefined) return d.failWith(exchange, res, 'invalid');
  exchange.post = post;
  if (post.batch) {
    exchange.outcome = 'invalid';
    return sendError(res, 400, null, -32600, 'Send one JSON-RPC message per request: the federated endpoint speaks 2025-06-18 and later, which have no batches.');
  }
  const note: FederatedNote = {};
  exchange.bytesIn = read.bytes.length;
  const principal = exchange.principal!;
  const admit = async (server: string, tool: string, id: JsonRpcId): Promise<LimitRefusal | undefined> => {
    const a = await d.limits.admitToolCall(principal, server, tool);
    if (a.verdict === 'admitted') return undefined;
    return a.verdict === 'limited'
      ? { outcome: 'limited', answer: limitedCall(id, a.retryAfterMs), retryAfterSeconds: retryAfterSeconds(a.retryAfterMs) }
      : { outcome: 'limiter_unavailable', answer: uncheckedCall(id), retryAfterSeconds: retryAfterSeconds(UNAVAILABLE_RETRY_MS) };
  };
  const signal = exchange.closed;
  const guard = (server: string, message: Record<string, unknown>) =>
    guardCalls(d.pipeline, { requestId: exchange.id, principal, server, signal }, message, readPost(message)!, d.maxResultBytes);
  await d.federation.post({ req, res, owner, access, message: read.json as Record<string, unknown>, bytes: read.bytes, note, admit, guard });
  exchange.server = note.server ?? FEDERATED;
  exchange.tool = note.tool;
  exchange.bytesOut = note.bytes ?? Number(res.getHeader('content-length') ?? 0);
  // A tool call leaves its record under the server it went to and its own name; a refused one under "*" and the name sent.
  const call = post.messages[0];
  if (call.method === 'tools/call' && call.id !== undefined) {
    exchange.calls = [{ id: call.id, tool: note.tool ?? call.tool, allowed: note.tool !== undefined, traceparent: call.traceparent }];
  }
  if (note.failure !== undefined) return d.failWith(exchange, res, note.failure);
  if (note.refused === true) exchange.outcome = 'refused';
  else if (note.limited !== undefined) exchange.outcome = note.limited;
  else if (note.exceeded === true) exchange.outcome = 'too_large';
  else if (note.status !== undefined) exchange.outcome = note.status === 499 ? 'client_closed' : note.status < 400 ? 'ok' : 'rejected';
  else exchange.outcome = res.statusCode < 400 ? 'ok' : 'rejected';
}
