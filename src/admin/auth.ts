// Who may call the admin API: a bearer key whose SHA-256 digest is listed in
// admin.keys. A gateway key is not one (the config check refuses a digest in
// both lists), and neither is a missing, malformed or unknown key: each is a
// 401 with WWW-Authenticate, and the same message, so a caller learns nothing
// about which keys exist.
import type { IncomingMessage } from 'node:http';
import { authorizationOf, BEARER, hashKey } from '../auth/keys';
import { GatewayError } from '../contract/errors';

/** The digests of the admin keys in force. */
export type AdminKeys = ReadonlySet<string>;

/** The caller, named by its key's digest's first 12 hex digits (never the key); throws the 401. */
export function adminOf(keys: AdminKeys, req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): string {
  const match = BEARER.exec(authorizationOf(req) ?? '');
  const digest = match === null ? undefined : hashKey(match[1]);
  if (digest === undefined || !keys.has(digest)) {
    throw new GatewayError('unauthorized', 'The admin API needs an admin key: "Authorization: Bearer <admin key>", one whose SHA-256 digest is listed in admin.keys. A gateway key is not an admin key.');
  }
  return digest.slice(0, 12);
}

/** The admin keys of a config, as a set, made once per config. */
export function adminKeysOf(): (admin: { keys: readonly string[] } | undefined) => AdminKeys {
  const made = new WeakMap<object, AdminKeys>();
  const none: AdminKeys = new Set();
  return (admin) => {
    if (admin === undefined) return none;
    let keys = made.get(admin);
    if (keys === undefined) made.set(admin, (keys = new Set(admin.keys)));
    return keys;
  };
}
