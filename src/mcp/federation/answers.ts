// What the federated /mcp answers itself: a JSON-RPC result or error for a
// request, 202 for what needs no answer, and the transport's HTTP-level
// refusals (a missing or unknown session, a version of another era).
import type { ServerResponse } from 'node:http';
import type { JsonRpcId } from '../messages';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export const sendResult = (res: ServerResponse, id: JsonRpcId, result: unknown, headers?: Record<string, string>): void =>
  sendJson(res, 200, { jsonrpc: '2.0', id, result }, headers);

export const sendError = (res: ServerResponse, status: number, id: JsonRpcId | null, code: number, message: string, data?: unknown): void =>
  sendJson(res, status, { jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } });

export function accepted(res: ServerResponse): void {
  res.writeHead(202, { 'content-length': 0 });
  res.end();
}

// JSON-RPC's own codes, and the ones the MCP specification gives.
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const SERVER_ERROR = -32000;
/** The code the SDK's servers answer an unknown session with (the transport gives only the 404). */
export const SESSION_NOT_FOUND = -32001;
/** Resource not found (server/resources). */
export const RESOURCE_NOT_FOUND = -32002;
/** 2026-07-28: the request's headers do not match its body (basic/transports, Server Validation). */
export const HEADER_MISMATCH = -32020;
/** 2026-07-28: UnsupportedProtocolVersionError, with the versions the server speaks. */
export const UNSUPPORTED_VERSION = -32022;
