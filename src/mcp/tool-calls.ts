// What each MCP tool call leaves behind, once its response has closed: a
// usage record (the spend store and the usage export, as a model request's),
// a count and a duration (sluice_mcp_tool_calls_total and its histogram), an
// `execute_tool` span when traced, and an audit line naming the key and the
// tool. One call in, every trace of it out: a relay path (/mcp/<server>) or a
// federated one hands the same facts, once per tools/call request.
//
//   calls.finish({ requestId, principal, server: 'github', calls: [{ id: 1, tool: 'search_code', allowed: true }], outcome: 'ok', ... });
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Principal } from '../auth/keys';
import { isoTime } from '../plumbing/iso-time';
import type { UsageRecord } from '../spend/record';
import type { Tracing } from '../tracing/tracing';
import type { McpAccess } from './access';
import type { JsonRpcId, McpPost } from './messages';
import type { McpOutcome } from './metrics';
import { isToolName, toolCallCounter, type ToolCallCounter } from './tool-metrics';

/** One tools/call request of a POST: its JSON-RPC id, the tool it names, whether the key may call it. */
export interface ToolCall {
  id: JsonRpcId;
  tool?: string;
  allowed: boolean;
  /** params._meta.traceparent, when the caller put its span there. */
  traceparent?: string;
}

/** A POST's tools/call requests (a notification is no call: nothing answers it). */
export function toolCallsOf(post: McpPost, server: string, access: McpAccess): ToolCall[] {
  return post.messages.flatMap((m) => (m.method !== 'tools/call' || m.id === undefined ? []
    : [{ id: m.id, tool: m.tool, allowed: m.tool !== undefined && access.tool(server, m.tool), traceparent: m.traceparent }]));
}

/** How the HTTP request that carried the calls ended. */
export interface ToolCallsEnd {
  requestId: string;
  principal: Principal;
  server: string;
  calls: readonly ToolCall[];
  outcome: McpOutcome;
  status: number;
  /** Arrival, in milliseconds since the epoch, and how long until the response closed. */
  startTime: number;
  durationMs: number;
  /** The request body's bytes, and the response body's bytes the client was sent. */
  bytesIn: number;
  bytesOut: number;
  /** The request's headers: its trace context and MCP-Protocol-Version are read, nothing else. */
  headers: IncomingHttpHeaders;
}

export interface ToolCallDeps {
  logger: Logger;
  metrics?: Registry;
  /** Where usage records go (the process's spend recorder); none: not recorded. */
  spend?: { add(record: UsageRecord): void };
  tracing?: Tracing;
}

/** The tools specification's longest tool name: a refused name (the client's text) is kept to it. */
const TOOL_MAX = 128;

const textOf = (value: string | string[] | undefined): string | undefined => (typeof value === 'string' ? value : undefined);

const share = (total: number, parts: number, index: number): number => Math.floor(total / parts) + (index === 0 ? total % parts : 0);

/**
 * The usage record of the `index`th call of a request. The request's bytes are
 * shared among its calls (a batch, 2025-03-26 only; the first takes the
 * remainder), so the records' sums are the request's; its duration is each one's.
 */
export function toolCallRecord(end: ToolCallsEnd, index: number, now: number): UsageRecord {
  const call = end.calls[index];
  const parts = end.calls.length;
  return {
    time: isoTime(now),
    request_id: end.requestId,
    key: end.principal.id,
    team: end.principal.team,
    org: end.principal.org,
    user: null,
    model: null,
    protocol: 'mcp',
    endpoint: 'tools/call',
    status: end.status,
    reason: end.outcome === 'ok' ? null : end.outcome,
    prompt_tokens: 0,
    cached_tokens: 0,
    completion_tokens: 0,
    reasoning_tokens: 0,
    estimated: false,
    // The gateway puts no price on a tool call.
    cost: 0,
    server: end.server,
    tool: call.tool === undefined ? null : call.tool.slice(0, TOOL_MAX),
    outcome: end.outcome,
    duration_ms: Math.round(end.durationMs * 100) / 100,
    bytes_in: share(end.bytesIn, parts, index),
    bytes_out: share(end.bytesOut, parts, index),
  };
}

export class ToolCalls {
  private readonly count: ToolCallCounter;

  constructor(private readonly deps: ToolCallDeps) {
    this.count = toolCallCounter(deps.metrics);
  }

  finish(end: ToolCallsEnd): void {
    const now = Date.now();
    const { logger, spend, tracing } = this.deps;
    const headers = { traceparent: textOf(end.headers.traceparent), tracestate: textOf(end.headers.tracestate) };
    const protocolVersion = textOf(end.headers['mcp-protocol-version']);
    for (let i = 0; i < end.calls.length; i++) {
      const call = end.calls[i];
      const record = toolCallRecord(end, i, now);
      spend?.add(record);
      this.count(end.server, call.tool, call.allowed, end.outcome, end.durationMs / 1000);
      tracing?.toolCall({
        requestId: end.requestId, keyId: end.principal.id, org: end.principal.org, server: end.server,
        // A name a key's glob lets through may still be any text: only one shaped as a tool name names the span.
        tool: call.allowed && call.tool !== undefined && isToolName(call.tool) ? call.tool : undefined, rpcId: call.id, protocolVersion,
        outcome: end.outcome, status: end.status, startTime: end.startTime, endTime: end.startTime + end.durationMs,
        metaTraceparent: call.traceparent, headers,
      });
      // The audit trail: which key called (or tried to call) which tool, and how it ended; never its arguments.
      logger.info({ audit: true, requestId: end.requestId, keyId: end.principal.id, org: end.principal.org ?? undefined, server: end.server, tool: record.tool, outcome: end.outcome, status: end.status }, 'mcp tool call');
    }
  }
}
