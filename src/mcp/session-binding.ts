// A server's session bound to the key that began it, with no state kept:
// the client is given the server's session id with a tag after it,
// "<server's id>.<tag>", the tag an HMAC of the server's name and its id
// under a secret of the caller's: the SHA-256 of the key it presented,
// which no other caller knows. A request's session id is
// checked against the key that sends it and unwrapped before it goes on; one
// another key began, or one the gateway never gave, is a session not found.
// Any replica and any worker checks it alike: nothing is stored.
//
//   const secret = callerSecret(req);
//   wrapSession('github', 'c0ffee', secret)         // 'c0ffee.Yh3…'
//   unwrapSession('github', 'c0ffee.Yh3…', secret)  // 'c0ffee', or undefined for another caller
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const TAG_BYTES = 16;
const TAG_CHARS = Math.ceil((TAG_BYTES * 4) / 3);

/** The caller's secret: the digest of the credential it authenticated with (the Authorization header, once it was accepted). */
export const callerSecret = (req: IncomingMessage): Buffer => createHash('sha256').update((req.headers.authorization ?? '').replace(/^\s*bearer\s+/i, '')).digest();

const tag = (server: string, session: string, secret: Buffer): Buffer =>
  createHmac('sha256', secret).update(`${server}\n${session}`).digest().subarray(0, TAG_BYTES);

/** The id the client is given for the server's session `session`. */
export const wrapSession = (server: string, session: string, secret: Buffer): string =>
  `${session}.${tag(server, session, secret).toString('base64url')}`;

/** The server's session id in the client's `sent`, or undefined when this caller was not given it. */
export function unwrapSession(server: string, sent: string, secret: Buffer): string | undefined {
  const dot = sent.lastIndexOf('.');
  if (dot < 1 || sent.length - dot - 1 !== TAG_CHARS) return undefined;
  const session = sent.slice(0, dot);
  // Compared as text: base64url's last character has bits that decode to nothing, so two texts can give one tag.
  const given = Buffer.from(sent.slice(dot + 1));
  const expected = Buffer.from(tag(server, session, secret).toString('base64url'));
  return given.length === expected.length && timingSafeEqual(given, expected) ? session : undefined;
}

/** What the relay does with session ids: sends the server's own, gives the client the bound one. */
export interface SessionBinding {
  /** The server's id of the client's session, unwrapped; absent before one is begun. */
  session?: string;
  wrap(session: string): string;
}

/** The binding of this request to `server`, or undefined when the session id it sent is not one this caller was given. */
export function bindingOf(req: IncomingMessage, server: string): SessionBinding | undefined {
  const secret = callerSecret(req);
  const wrap = (session: string): string => wrapSession(server, session, secret);
  const sent = req.headers['mcp-session-id'];
  if (typeof sent !== 'string') return { wrap };
  const session = unwrapSession(server, sent, secret);
  return session === undefined ? undefined : { session, wrap };
}
