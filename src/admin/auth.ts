// Who may call the admin API: a bearer key whose SHA-256 digest is listed in
// admin.keys, or in admin.readKeys for one that may only read (GET). A gateway key is not one (the config check refuses a digest in
// both lists), and neither is a missing, malformed or unknown key: each is a
// 401 with WWW-Authenticate, and the same message, so a caller learns nothing
// about which keys exist.
import type { IncomingMessage } from 'node:http';
import { authorizationOf, BEARER, hashKey } from '../auth/keys';
import { GatewayError } from '../contract/errors';

/** The digests of the admin keys in force: each one's, true when it may only read. */
export type AdminKeys = ReadonlyMap<string, boolean>;

/** The caller, named by its key's digest's first 12 hex digits (never the key), and whether it may only read; throws the 401. */
export function adminOf(keys: AdminKeys, req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): { admin: string; readOnly: boolean } {
  const match = BEARER.exec(authorizationOf(req) ?? '');
  const digest = match === null ? undefined : hashKey(match[1]);
  const readOnly = digest === undefined ? undefined : keys.get(digest);
  if (readOnly === undefined) {
    throw new GatewayError('unauthorized', 'The admin API needs an admin key: "Authorization: Bearer <admin key>", one whose SHA-256 digest is listed in admin.keys. A gateway key is not an admin key.');
  }
  return { admin: digest!.slice(0, 12), readOnly };
}

/** The admin keys of a config, as a set, made once per config. */
export function adminKeysOf(): (admin: { keys: readonly string[]; readKeys?: readonly string[] } | undefined) => AdminKeys {
  const made = new WeakMap<object, AdminKeys>();
  const none: AdminKeys = new Map();
  return (admin) => {
    if (admin === undefined) return none;
    let keys = made.get(admin);
    if (keys === undefined) made.set(admin, (keys = new Map([...(admin.readKeys ?? []).map((d): [string, boolean] => [d, true]), ...admin.keys.map((d): [string, boolean] => [d, false])])));
    return keys;
  };
}
