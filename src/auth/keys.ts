// Bearer-key authentication. Only SHA-256 digests of keys are configured; the
// presented key is hashed and looked up, and never logged, echoed or forwarded.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors';
import type { KeyConfig } from '../config/schema';
import { compileGlobList } from './glob';
import type { Principal } from '../types';

export type { Principal } from '../types';

export type KeyIndex = ReadonlyMap<string, Principal>;

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export function buildKeyIndex(keys: readonly KeyConfig[]): KeyIndex {
  const index = new Map<string, Principal>();
  for (const key of keys) {
    index.set(key.sha256, { id: key.id, org: key.org ?? null, mayUse: compileGlobList(key.models) });
  }
  return index;
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;
const AUTHORIZATION = /^authorization$/i;

/**
 * The request's Authorization header. Node keeps the first of several and
 * drops the rest, so a request with two keys would be judged on one of them:
 * refused instead. The raw headers are read only when there is one at all.
 */
export function authorizationOf(req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const raw = req.rawHeaders;
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 13 && AUTHORIZATION.test(raw[i]) && ++seen > 1) {
      throw new GatewayError('unauthorized', 'More than one Authorization header. Send exactly one: "Authorization: Bearer <key>".');
    }
  }
  return header;
}

/**
 * The key of a Messages API request: Anthropic's clients send it as
 * `x-api-key` (Claude Code, older SDKs) or as a bearer token (newer SDKs,
 * ANTHROPIC_AUTH_TOKEN); both are accepted, the Authorization header first.
 */
export function apiKeyOf(req: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): string | undefined {
  const header = authorizationOf(req);
  if (header !== undefined) return header;
  const key = req.headers['x-api-key'];
  return typeof key === 'string' && key !== '' ? `Bearer ${key}` : undefined;
}

/** How a Messages API client may send its key, for the message of a 401. */
export const MESSAGES_KEY_FORMS = '"x-api-key: <key>" or "Authorization: Bearer <key>"';

/** Resolves the Authorization header to a principal, or throws 401; `forms` says how the key may be sent. */
export function authenticate(index: KeyIndex, header: string | undefined, forms = '"Authorization: Bearer <key>"'): Principal {
  if (header === undefined || header === '') {
    throw new GatewayError('unauthorized', `Missing API key. Send it as ${forms}.`);
  }
  const match = BEARER.exec(header);
  if (match === null) {
    throw new GatewayError('unauthorized', `Malformed API key header. Use the form ${forms}.`);
  }
  const principal = index.get(hashKey(match[1]));
  if (principal === undefined) {
    throw new GatewayError('unauthorized', 'Invalid API key. Check the key, or ask the gateway operator for a new one.');
  }
  return principal;
}

export function authorizeModel(principal: Principal, model: string): void {
  if (!principal.mayUse(model)) {
    throw new GatewayError('model_not_allowed', `This API key may not use model "${model}". Ask the gateway operator to allow it.`, { param: 'model' });
  }
}
