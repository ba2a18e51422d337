// The 2026-07-28 revision's request metadata: a request states its version
// in MCP-Protocol-Version (and in its _meta), and mirrors its method and
// name into Mcp-Method and Mcp-Name so that intermediaries can route and
// apply policy without reading the body. A gateway that reads the body must
// refuse a request whose headers say otherwise (400, HeaderMismatch), or a
// component routing on the header and a server acting on the body could be
// told two different things (basic/transports/streamable-http, Server Validation).
import type { IncomingMessage } from 'node:http';

/** The first revision of the header-carried era: versions are dates, so they compare as strings. */
export const MODERN_VERSION = '2026-07-28';
export const VERSION_META = 'io.modelcontextprotocol/protocolVersion';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The methods whose name (or uri) is mirrored into Mcp-Name. */
const NAMED: Record<string, 'name' | 'uri'> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

const BASE64_VALUE = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
const PLAIN_VALUE = /^[\x20-\x7e\t]*$/;

/** A header value in the sentinel encoding decoded; a plain value as it is; undefined when it is neither. */
export function decodeHeaderValue(value: string): string | undefined {
  const encoded = BASE64_VALUE.exec(value);
  if (encoded !== null) return Buffer.from(encoded[1], 'base64').toString('utf8');
  return PLAIN_VALUE.test(value) ? value : undefined;
}

/** The version a request states: its header, else its _meta's. */
export function statedVersion(req: IncomingMessage, message: unknown): string | undefined {
  const header = req.headers['mcp-protocol-version'];
  if (typeof header === 'string') return header;
  const meta = isObject(message) && isObject(message.params) && isObject(message.params._meta) ? message.params._meta[VERSION_META] : undefined;
  return typeof meta === 'string' ? meta : undefined;
}

export const isModern = (version: string | undefined): boolean => version !== undefined && version >= MODERN_VERSION;

/**
 * For a request of the 2026-07-28 era or later: what is wrong with its
 * headers, said so the client can fix it; undefined when they agree with the
 * body (or the request is of an earlier era, which has no such headers).
 */
export function headerMismatch(req: IncomingMessage, message: unknown): string | undefined {
  if (!isObject(message) || typeof message.method !== 'string' || message.id === undefined) return undefined;
  const header = req.headers['mcp-protocol-version'];
  const meta = isObject(message.params) && isObject(message.params._meta) ? message.params._meta[VERSION_META] : undefined;
  if (!isModern(typeof header === 'string' ? header : typeof meta === 'string' ? meta : undefined)) return undefined;
  if (typeof header !== 'string') return 'The MCP-Protocol-Version header is required.';
  if (meta !== undefined && meta !== header) return 'The MCP-Protocol-Version header does not match the body\'s _meta protocol version.';
  const method = req.headers['mcp-method'];
  if (typeof method !== 'string') return 'The Mcp-Method header is required.';
  if (method !== message.method) return 'The Mcp-Method header does not match the body\'s method.';
  const field = NAMED[message.method];
  if (field === undefined) return undefined;
  const name = req.headers['mcp-name'];
  if (typeof name !== 'string') return `The Mcp-Name header is required for ${message.method}.`;
  const decoded = decodeHeaderValue(name);
  if (decoded === undefined) return 'The Mcp-Name header holds characters a header may not carry: send it as =?base64?...?=.';
  const value = isObject(message.params) ? message.params[field] : undefined;
  if (decoded !== value) return `The Mcp-Name header does not match the body's params.${field}.`;
  return undefined;
}
