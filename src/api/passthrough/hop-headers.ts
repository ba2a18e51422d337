// Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, so a
// proxy never passes them on, in either direction. That is the fixed list
// plus every header the message's own Connection header names.
import type { IncomingHttpHeaders } from 'node:http';

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'transfer-encoding'];

/**
 * The framing of the message itself, which Node sets and checks: a name in
 * Connection cannot take it away (that would send a body without its length).
 */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'host']);

/** Removes the hop-by-hop headers from `headers` (except `keep`, which the message's framing still needs). */
export function dropHopByHop(headers: IncomingHttpHeaders, keep: readonly string[] = []): void {
  const named = headers.connection;
  if (named !== undefined) {
    for (const token of named.split(',')) {
      const name = token.trim().toLowerCase();
      if (name !== '' && !FRAMING.has(name)) delete headers[name];
    }
  }
  for (const name of HOP_BY_HOP) if (!keep.includes(name)) delete headers[name];
}
