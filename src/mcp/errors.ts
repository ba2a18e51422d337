// The gateway's own MCP answers: what the transport specification allows an
// HTTP-level failure to carry, a JSON-RPC error response with no id
// ({"jsonrpc":"2.0","id":null,"error":{code,message}}), under the HTTP status
// that says what happened; and a refused tool call's answer, the error the
// tools specification gives for an unknown tool (-32602), so a refusal looks
// like a tool that is not there; a call over a limit, a server error that
// says when to try again. Messages are generic: never a server's address, a
// header, why a key may not use something, or a limit's size.
import type { ServerResponse } from 'node:http';
import { formatReset } from '../admission/refusals';
import type { JsonRpcId } from './messages';

/** What went wrong, as counted in sluice_mcp_requests_total's outcome label. */
export type McpFailure = 'not_found' | 'parse' | 'invalid' | 'too_large' | 'unsupported_media_type' | 'timeout' | 'unreachable' | 'server_error'
  | 'no_session' | 'unknown_session' | 'busy';

// JSON-RPC 2.0's codes: -32700 parse error, -32600 invalid request; the rest is -32000, a server error
// (-32000 to -32099 are the implementation's own): the HTTP status says which.
const FAILURES: Record<McpFailure, { status: number; code: number; message: string }> = {
  not_found: { status: 404, code: -32000, message: 'No such MCP server at this path.' },
  parse: { status: 400, code: -32700, message: 'The body is not valid JSON.' },
  invalid: { status: 400, code: -32600, message: 'The body must be a JSON-RPC 2.0 message.' },
  too_large: { status: 413, code: -32000, message: 'The request body is too large.' },
  unsupported_media_type: { status: 415, code: -32000, message: 'Send the message as JSON (Content-Type: application/json).' },
  timeout: { status: 504, code: -32000, message: 'The MCP server did not answer in time. Try again later.' },
  unreachable: { status: 502, code: -32000, message: 'The MCP server could not be reached. Try again later.' },
  server_error: { status: 502, code: -32000, message: 'The MCP server failed. Try again later; if it keeps failing, tell the gateway operator and quote the x-request-id header.' },
  // A server the gateway starts (stdio) keeps its sessions here: what the transport specification answers for them.
  no_session: { status: 400, code: -32000, message: 'No session: send initialize first, without an Mcp-Session-Id header, then that header on every request.' },
  // The code the SDK's servers answer an unknown session with; the 404 is what makes a client begin another.
  unknown_session: { status: 404, code: -32001, message: 'Session not found: it ended or never existed. Initialize a new one.' },
  busy: { status: 503, code: -32000, message: 'Too many sessions on this MCP server. Try again later.' },
};

export const failureStatus = (failure: McpFailure): number => FAILURES[failure].status;

/** Ends `res` with the failure's status and JSON-RPC error, unless an answer has begun (then the connection is cut); the body's bytes. */
export function sendFailure(res: ServerResponse, failure: McpFailure): number {
  if (res.headersSent) {
    res.destroy();
    return 0;
  }
  const { status, code, message } = FAILURES[failure];
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
  const bytes = Buffer.byteLength(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes });
  res.end(body);
  return bytes;
}

/**
 * The answer to a tools/call over one of its key's or org's limits, or that
 * could not be checked (redis.failMode closed, Redis out): JSON-RPC's
 * implementation-defined server error (-32000; MCP defines no code for it),
 * with when to try again in words and in `data`, and never the limit itself.
 * `data.reason` is the gateway's reason (docs/errors.md).
 */
export const limitedCall = (id: JsonRpcId, retryAfterMs: number) => ({
  jsonrpc: '2.0', id,
  error: { code: -32000, message: `Too many calls to this tool: a rate limit is reached. Try again in ${formatReset(retryAfterMs)}.`, data: { reason: 'rate_limited', retryAfterMs } },
});

/** How long a client is told to wait when the limits could not be checked. */
export const UNAVAILABLE_RETRY_MS = 1000;

export const uncheckedCall = (id: JsonRpcId) => ({
  jsonrpc: '2.0', id,
  error: { code: -32000, message: 'The gateway cannot check its rate limits now, so this tool call was not made. Try again in a moment.', data: { reason: 'limiter_unavailable', retryAfterMs: UNAVAILABLE_RETRY_MS } },
});

/** A batch's other requests, when the gateway answers the batch whole. */
export const notProcessed = (id: JsonRpcId) =>
  ({ jsonrpc: '2.0', id, error: { code: -32000, message: 'Not processed: send this request again on its own.' } });

/** The answer to a tools/call of a tool the key may not call: the tools specification's unknown-tool error. */
export const unknownTool = (id: JsonRpcId, name: string | undefined) =>
  ({ jsonrpc: '2.0', id, error: { code: -32602, message: `Unknown tool: ${(name ?? '').slice(0, 200)}` } });

/**
 * The answer to a tool call a plugin refused (its GatewayError's message,
 * which says what to change and nothing of the rule, and its reason in
 * `data`): the arguments refused (a 4xx but 429) are invalid params, -32602,
 * as JSON-RPC 2.0 names a method's parameters it will not take; anything else
 * (a limit, a result refused) is -32000, a server error.
 */
export const toolRefused = (id: JsonRpcId, refusal: { status: number; reason: string; message: string }, stage: 'call' | 'result') => ({
  jsonrpc: '2.0', id,
  error: { code: stage === 'call' && refusal.status < 500 && refusal.status !== 429 ? -32602 : -32000, message: refusal.message, data: { reason: refusal.reason } },
});

/** The gateway's own answers to a tool call it could not pass on as it was. */
export type CallFailure = 'arguments_invalid' | 'too_deep' | 'too_large' | 'result_too_deep' | 'resumed' | 'check_failed';

const MIB = 1024 * 1024;

export function callFailure(id: JsonRpcId | null, failure: CallFailure, limitBytes = 0) {
  const size = limitBytes >= MIB ? `${Math.round((limitBytes / MIB) * 10) / 10} MiB` : `${limitBytes} bytes`;
  const [code, message] = {
    arguments_invalid: [-32602, 'params.arguments must be an object (the tool\'s arguments by name).'],
    too_deep: [-32602, 'The tool call\'s arguments nest too deeply (more than 64 levels): flatten them.'],
    too_large: [-32000, `The tool's result is larger than the gateway accepts (${size}). Ask the tool for less: a narrower query or one page of results.`],
    result_too_deep: [-32000, 'The tool\'s result nests too deeply for the gateway to check (more than 64 levels).'],
    resumed: [-32000, 'A tool result replayed on a resumed stream cannot be checked by the gateway: call the tool again.'],
    check_failed: [-32603, 'The gateway could not check this tool call. Try again later; if it keeps failing, tell the gateway operator and quote the x-request-id header.'],
  }[failure] as [number, string];
  return { jsonrpc: '2.0', id, error: { code, message } };
}
