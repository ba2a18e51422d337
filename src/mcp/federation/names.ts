// Names on the federated /mcp: each server's tools and prompts under
// "<server>__<tool>" (a server's name never holds "__", so the first "__"
// splits them), and list cursors that carry which server a page came from
// with that server's own cursor, so paging survives the merge.
//
//   prefixed('github', 'search_code')  // 'github__search_code'
//   splitName('github__search_code')   // { server: 'github', name: 'search_code' }

export const SEPARATOR = '__';

export const prefixed = (server: string, name: string): string => `${server}${SEPARATOR}${name}`;

/** The server and its own name, or undefined when `name` carries no server. */
export function splitName(name: string): { server: string; name: string } | undefined {
  const at = name.indexOf(SEPARATOR);
  if (at < 1 || at + SEPARATOR.length >= name.length) return undefined;
  return { server: name.slice(0, at), name: name.slice(at + SEPARATOR.length) };
}

/** Where a merged list goes on: the server to read next and, within it, that server's cursor. */
export interface ListPosition {
  server: string;
  cursor?: string;
}

const MAX_CURSOR_CHARS = 4096;

export const encodeCursor = (position: ListPosition): string => Buffer.from(JSON.stringify(position)).toString('base64url');

/** The position a client's cursor names, or undefined when it is not one the gateway made. */
export function decodeCursor(cursor: unknown): ListPosition | undefined {
  if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_CHARS) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const { server, cursor: inner } = value as Record<string, unknown>;
    if (typeof server !== 'string' || (inner !== undefined && typeof inner !== 'string')) return undefined;
    return inner === undefined ? { server } : { server, cursor: inner };
  } catch {
    return undefined;
  }
}
