// The gateway's own JSON-RPC exchanges with a server, for the federated
// /mcp: begin a session (initialize, then notifications/initialized, with
// the client's version and what it may be asked for), send one request and
// read its answer (a JSON body, or the event of an event stream whose
// message answers the request), pass a notification on, end a session.
import type { McpFailure } from '../errors';
import { parseJson } from '../list-filter';
import type { JsonRpcId } from '../messages';
import type { McpServerRelay } from '../relay';
import type { UpstreamState } from './sessions';

export interface RpcAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** What a request of the gateway's own came to: the server's answer, a session it no longer knows, or a failure. */
export type RpcEnd = RpcAnswer | 'gone' | McpFailure;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const EVENT_STREAM = /^text\/event-stream\b/i;

/** The message answering `id` in a JSON body or an event stream's data. */
export function answerIn(text: string, type: string, id: JsonRpcId): RpcAnswer | undefined {
  const candidates: unknown[] = [];
  if (EVENT_STREAM.test(type)) {
    for (const event of text.split(/\r\n\r\n|\n\n|\r\r/)) {
      const data = event.split(/\r\n|\n|\r/).filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
      if (data.length > 0) candidates.push(parseJson(data.join('\n')));
    }
  } else {
    const json = parseJson(text);
    candidates.push(...(Array.isArray(json) ? json : [json]));
  }
  for (const m of candidates) {
    if (!isObject(m) || m.id !== id || m.method !== undefined) continue;
    if (isObject(m.result)) return { result: m.result };
    if (isObject(m.error) && typeof m.error.code === 'number' && typeof m.error.message === 'string') {
      return { error: { code: m.error.code, message: m.error.message, data: m.error.data } };
    }
  }
  return undefined;
}

// The gateway's own request ids: a string the client's numbers never meet (they go in the gateway's sessions only).
let sequence = 0;
const nextId = (): string => `sluice-${++sequence}`;

/** One request in the gateway's session with the server. */
export async function request(relay: McpServerRelay, upstream: UpstreamState, method: string, params: unknown): Promise<RpcEnd> {
  const id = nextId();
  const answer = await relay.exchange('POST', upstream, { jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
  if (typeof answer === 'string') return answer;
  if (answer.status === 404 && upstream.session !== undefined) return 'gone';
  if (answer.status !== 200) return 'server_error';
  return answerIn(answer.text, String(answer.headers['content-type'] ?? ''), id) ?? 'server_error';
}

/** A notification in the gateway's session with the server; what became of it is not waited for by the client. */
export async function notify(relay: McpServerRelay, upstream: UpstreamState, method: string, params?: unknown): Promise<void> {
  await relay.exchange('POST', upstream, { jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });
}

// What a server may ask of the client through the gateway: nothing on the federated endpoint,
// which does not carry a server's own requests (sampling, elicitation, roots) to the client.
const NOT_RELAYED = new Set(['sampling', 'elicitation', 'roots']);

/** Begins the gateway's session with the server, in the client's version, as the client. */
export async function begin(relay: McpServerRelay, version: string, clientInfo: unknown, capabilities: unknown): Promise<UpstreamState | McpFailure> {
  const offered = isObject(capabilities) ? Object.fromEntries(Object.entries(capabilities).filter(([name]) => !NOT_RELAYED.has(name))) : {};
  const id = nextId();
  const message = { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: version, capabilities: offered, clientInfo } };
  const answer = await relay.exchange('POST', undefined, message);
  if (typeof answer === 'string') return answer;
  if (answer.status !== 200) return 'server_error';
  const result = answerIn(answer.text, String(answer.headers['content-type'] ?? ''), id)?.result;
  if (result === undefined || typeof result.protocolVersion !== 'string') return 'server_error';
  const session = answer.headers['mcp-session-id'];
  const upstream: UpstreamState = {
    ...(typeof session === 'string' ? { session } : {}),
    version: result.protocolVersion,
    capabilities: isObject(result.capabilities) ? Object.keys(result.capabilities) : [],
  };
  await notify(relay, upstream, 'notifications/initialized');
  return upstream;
}

/** Ends the gateway's session with the server (a server that keeps none has nothing to end). */
export async function end(relay: McpServerRelay, upstream: UpstreamState): Promise<void> {
  if (upstream.session !== undefined) await relay.exchange('DELETE', upstream);
}
