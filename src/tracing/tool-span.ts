// One MCP tool call as a span, `execute_tool <tool>` in the GenAI
// conventions of OpenTelemetry, with the attributes their MCP conventions
// give the side that receives a call (mcp.method.name, jsonrpc.request.id,
// mcp.protocol.version): a SERVER span, since the caller's trace enters the
// gateway here. Its parent is the caller's span: the traceparent in the
// call's params._meta (where the MCP conventions carry it), else the
// request's traceparent header (linked when both came and differ). Made
// whole when the response has closed, with the arrival as its start. Never
// the arguments, the result, the session id or a header value.
import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** What the MCP gateway knows of one finished tools/call. */
export interface ToolCallFacts {
  /** The gateway's request id (x-request-id). */
  requestId: string;
  keyId?: string;
  org?: string | null;
  /** The configured server's name. */
  server: string;
  /** The tool, only when the key may call it: a refused name is the client's text. */
  tool?: string;
  /** The JSON-RPC request's id. */
  rpcId?: string | number;
  /** The MCP-Protocol-Version header, when it is one (YYYY-MM-DD). */
  protocolVersion?: string;
  /** How it ended (sluice_mcp_tool_calls_total's outcome), and the HTTP status. */
  outcome: string;
  status: number;
  /** Arrival and finish, in milliseconds since the epoch. */
  startTime: number;
  endTime: number;
  /** The caller's context: params._meta.traceparent, and the request's traceparent and tracestate headers. */
  metaTraceparent?: string;
  headers: { traceparent?: string; tracestate?: string };
}

const propagator = new W3CTraceContextPropagator();
const PROTOCOL_VERSION = /^\d{4}-\d{2}-\d{2}$/;
/** A JSON-RPC id is the client's: kept to this many characters. */
const RPC_ID_MAX = 64;

const extract = (carrier: Record<string, string | undefined>): Context | undefined => {
  const context = propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  return trace.getSpanContext(context) === undefined ? undefined : context;
};

/** The parent (the call's own context first, as the MCP conventions ask) and the request's, linked when it is another. */
export function toolCallParents(f: Pick<ToolCallFacts, 'metaTraceparent' | 'headers'>): { parent: Context; link?: Link } {
  const meta = f.metaTraceparent === undefined ? undefined : extract({ traceparent: f.metaTraceparent });
  const http = f.headers.traceparent === undefined ? undefined : extract({ traceparent: f.headers.traceparent, tracestate: f.headers.tracestate });
  if (meta === undefined) return { parent: http ?? ROOT_CONTEXT };
  const linked = http === undefined ? undefined : trace.getSpanContext(http)!;
  const same = linked !== undefined && linked.spanId === trace.getSpanContext(meta)!.spanId;
  return { parent: meta, link: linked === undefined || same ? undefined : { context: linked } };
}

/** error.type: the unknown-tool error's JSON-RPC code for a refusal, the server's status for its own error, else the outcome. */
function errorType(f: ToolCallFacts): string | undefined {
  if (f.outcome === 'ok') return undefined;
  if (f.outcome === 'refused') return '-32602';
  if (f.outcome === 'rejected') return String(f.status);
  return f.outcome;
}

export function recordToolCall(tracer: Tracer, f: ToolCallFacts, parent: Context, link: Link | undefined): void {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.type': 'extension',
    'mcp.method.name': 'tools/call',
    'network.transport': 'tcp',
    'network.protocol.name': 'http',
    'http.response.status_code': f.status,
    'sluice.request_id': f.requestId,
    'sluice.protocol': 'mcp',
    'sluice.mcp.server': f.server,
    'sluice.mcp.outcome': f.outcome,
  };
  if (f.tool !== undefined) attributes['gen_ai.tool.name'] = f.tool;
  if (f.rpcId !== undefined) attributes['jsonrpc.request.id'] = String(f.rpcId).slice(0, RPC_ID_MAX);
  if (f.protocolVersion !== undefined && PROTOCOL_VERSION.test(f.protocolVersion)) attributes['mcp.protocol.version'] = f.protocolVersion;
  if (f.keyId !== undefined) attributes['sluice.key_id'] = f.keyId;
  if (f.org !== undefined && f.org !== null) attributes['sluice.org'] = f.org;
  const type = errorType(f);
  if (type !== undefined) {
    attributes['error.type'] = type;
    if (f.outcome === 'refused') attributes['rpc.response.status_code'] = type;
  }
  const name = f.tool === undefined ? 'execute_tool' : `execute_tool ${f.tool}`;
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes, startTime: f.startTime, links: link === undefined ? undefined : [link] }, parent);
  if (type !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: f.outcome });
  span.end(f.endTime);
}
