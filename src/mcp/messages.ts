// What a client's POST says, read once: each JSON-RPC message's id, method and,
// for tools/call, the tool it names. A body is one message, or (protocol
// 2025-03-26 only; later revisions removed batching) an array of them.
import type { McpAccess } from './access';

export type JsonRpcId = string | number;

export interface McpMessage {
  /** Present on a request (and on a response the client sends back); absent on a notification. */
  id?: JsonRpcId;
  /** Absent on a response. */
  method?: string;
  /** tools/call's params.name, when it is a string. */
  tool?: string;
  /** tools/call's params._meta.traceparent, when it is a string: the caller's span, as the MCP conventions of OpenTelemetry carry it. */
  traceparent?: string;
}

export interface McpPost {
  messages: McpMessage[];
  batch: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function readMessage(value: unknown): McpMessage | undefined {
  if (!isObject(value) || value.jsonrpc !== '2.0') return undefined;
  const id = typeof value.id === 'string' || typeof value.id === 'number' ? value.id : undefined;
  const method = typeof value.method === 'string' ? value.method : undefined;
  if (method === undefined && id === undefined) return undefined;
  // A tool call is a request: one without an id could be answered by no one, and would pass the key's lists and limits unchecked.
  if (method === 'tools/call' && id === undefined) return undefined;
  const params = value.params;
  if (method !== 'tools/call' || !isObject(params)) return { id, method };
  const tool = typeof params.name === 'string' ? params.name : undefined;
  const meta = params._meta;
  const traceparent = isObject(meta) && typeof meta.traceparent === 'string' ? meta.traceparent : undefined;
  return { id, method, tool, traceparent };
}

/** The body's messages, or undefined when it is not JSON-RPC 2.0 (the gateway answers 400 -32600). */
export function readPost(body: unknown): McpPost | undefined {
  const batch = Array.isArray(body);
  const items = batch ? body : [body];
  if (items.length === 0) return undefined;
  const messages: McpMessage[] = [];
  for (const item of items) {
    const message = readMessage(item);
    if (message === undefined) return undefined;
    messages.push(message);
  }
  return { messages, batch };
}

/** A tools/call the key may not make: a tool it may not call, or one named by no string at all. */
export const isRefusedCall = (m: McpMessage, server: string, access: McpAccess): boolean =>
  m.method === 'tools/call' && m.id !== undefined && (m.tool === undefined || !access.tool(server, m.tool));

/** The ids of the tools/list requests: their answers are filtered. */
export const listRequestIds = (post: McpPost): Set<JsonRpcId> =>
  new Set(post.messages.flatMap((m) => (m.method === 'tools/list' && m.id !== undefined ? [m.id] : [])));

// The methods the specification defines (2025-06-18, 2025-11-25), counted by name; anything else is "other".
const METHODS = new Set([
  'initialize', 'ping', 'tools/list', 'tools/call', 'resources/list', 'resources/templates/list', 'resources/read',
  'resources/subscribe', 'resources/unsubscribe', 'prompts/list', 'prompts/get', 'completion/complete', 'logging/setLevel',
  'tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel',
  // 2026-07-28: the discovery a client of that revision sends first (Claude Code does), and its long-lived listen.
  'server/discover', 'subscriptions/listen',
  'notifications/initialized', 'notifications/cancelled', 'notifications/progress', 'notifications/roots/list_changed', 'notifications/tasks/status',
]);

/** The metrics label of a request's method: a spec method, "response" (the client answers the server), "batch", or "other". */
export function methodLabel(post: McpPost | undefined): string {
  if (post === undefined) return 'other';
  if (post.batch) return 'batch';
  const { method } = post.messages[0];
  if (method === undefined) return 'response';
  return METHODS.has(method) ? method : 'other';
}
