// Bearer-key authentication. Only SHA-256 digests of keys are configured; the
// presented key is hashed and looked up, and never logged, echoed or forwarded.
// The index holds the config file's keys and, behind them, the keys made at
// runtime through the admin API (src/keys/): a runtime key never shadows a
// configured one, by digest or by id. Expiry is checked at lookup.
import { createHash, hash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../contract/errors';
import type { KeyConfig } from '../config/schema';
import { compileGlobList } from './glob';
import type { KeyEntry, Principal } from '../contract/types';

export type { Principal } from '../contract/types';

/** What a digest authenticates as, and until when (ms since the epoch; none: for good). */
export interface Credential {
  readonly principal: Principal;
  readonly expiresAt?: number;
  /** The digest is a rotated key's old one, valid until expiresAt (its grace period). */
  readonly rotated?: boolean;
}

/** Digest → credential: a Map is one. */
export interface CredentialSource {
  get(digest: string): Credential | undefined;
}

/** The config's keys and the runtime ones, by digest. */
export type KeyIndex = CredentialSource;

/** The key's SHA-256, in hex: crypto.hash in one call where Node has it (20.12 on), which makes no Hash object per request. */
export const hashKey: (key: string) => string = typeof hash === 'function'
  ? (key) => hash('sha256', key, 'hex')
  : (key) => createHash('sha256').update(key).digest('hex');

export const KEY_PREFIX = 'sk-sluice-';

/** A new key: 32 random bytes (256 bits), base64url, behind a recognisable prefix. */
export const newKey = (): string => `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;

/** What a key's team and org add to its own allow-list (src/teams/teams.ts), asked on each check: a team changed at runtime counts at once. */
export interface TenantAllowLists {
  allows(org: string | null, team: string | null, model: string): boolean;
  anyModel(org: string | null, team: string | null): boolean;
}

/** The principal of a key entry; its allow-list compiled once, here. `uid`: a runtime key's identity; `tenants`: its team's and org's allow-lists. */
export function principalOf(id: string, entry: KeyEntry, uid?: string, tenants?: TenantAllowLists): Principal {
  const { models } = entry;
  const org = entry.org ?? null;
  const team = entry.team ?? null;
  const own = compileGlobList(models as string[] | undefined);
  const ownAny = models === undefined || models.includes('*');
  const base = { id, org, team, ...(uid !== undefined && { uid }), entry };
  if (tenants === undefined) return { ...base, mayUse: own, anyModel: ownAny };
  return { ...base, mayUse: (model) => own(model) && tenants.allows(org, team, model), get anyModel() { return ownAny && tenants.anyModel(org, team); } };
}

/** The config's keys, then the runtime ones (`runtime`) whose id the config does not hold. Two map lookups at most, nothing allocated. */
export function buildKeyIndex(keys: readonly KeyConfig[], runtime?: CredentialSource, tenants?: TenantAllowLists): KeyIndex {
  const own = new Map<string, Credential>();
  for (const { id, sha256, ...entry } of keys) own.set(sha256, { principal: principalOf(id, entry, undefined, tenants) });
  const configured = new Set(keys.map((k) => k.id));
  return {
    get(digest) {
      const found = own.get(digest);
      if (found !== undefined || runtime === undefined) return found;
      const late = runtime.get(digest);
      return late === undefined || configured.has(late.principal.id) ? undefined : late;
    },
  };
}

/** `Authorization: Bearer <key>`: the key is the first group. */
export const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;
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
  const found = index.get(hashKey(match[1]));
  if (found === undefined) {
    throw new GatewayError('unauthorized', 'Invalid API key. Check the key, or ask the gateway operator for a new one.');
  }
  if (found.expiresAt !== undefined && Date.now() >= found.expiresAt) throw expired(found);
  return found.principal;
}

function expired(found: Credential): GatewayError {
  const at = new Date(found.expiresAt!).toISOString();
  return new GatewayError('unauthorized', found.rotated
    ? `This API key was rotated, and its grace period ended at ${at}. Use the key that replaced it.`
    : `This API key expired at ${at}. Ask the gateway operator for a new one.`);
}

export function authorizeModel(principal: Principal, model: string): void {
  if (!principal.mayUse(model)) {
    throw new GatewayError('model_not_allowed', `This API key may not use model "${model}". Ask the gateway operator to allow it.`, { param: 'model' });
  }
}
