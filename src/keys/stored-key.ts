// A key made through the admin API, as it is stored (one JSON record per key,
// in Redis or in the keys file) and as the API shows it. The record holds the
// key's SHA-256 digest, never the key; after a rotation it also holds the old
// digest and the end of its grace period.
//
//   {"id":"ci-bot","uid":"…","sha256":"…","entry":{"org":"acme","limits":{"requests":60}},
//    "expiresAt":"2026-01-01T00:00:00.000Z","createdAt":"…","updatedAt":"…",
//    "previous":{"sha256":"…","until":"…"}}
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { principalOf, type Credential, type TenantAllowLists } from '../auth/keys';
import type { KeyEntry } from '../contract/types';

export interface StoredKey {
  id: string;
  /**
   * The key's identity, minted when it is made and never changed (not by a
   * change, not by a rotation): what owns the key's stored responses, so a
   * key made again under a revoked key's id owns nothing of the old one's.
   * Absent in a record written before keys had one (see identityOf).
   */
  uid?: string;
  sha256: string;
  /** org, models, limits, priority, and the fields plugins add to keys: what a config entry holds besides id and sha256. */
  entry: KeyEntry;
  /** ISO 8601; absent: the key does not expire. */
  expiresAt?: string;
  createdAt: string;
  updatedAt: string;
  /** A rotation's old digest, valid until `until` (ISO 8601). */
  previous?: { sha256: string; until: string };
}

const digest = z.string().regex(/^[0-9a-f]{64}$/);
const instant = z.iso.datetime();

/** A record read back from a store: written by the gateway, checked all the same (a file can be edited by hand). */
const storedKeySchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
  uid: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/).optional(),
  sha256: digest,
  entry: z.record(z.string(), z.unknown()),
  expiresAt: instant.optional(),
  createdAt: instant,
  updatedAt: instant,
  previous: z.strictObject({ sha256: digest, until: instant }).optional(),
});

/** The record in a JSON value, or undefined when it is not one. */
export function decodeStoredKey(value: unknown): StoredKey | undefined {
  const parsed = storedKeySchema.safeParse(value);
  return parsed.success ? parsed.data as StoredKey : undefined;
}

/** The record in a JSON text (a Redis value), or undefined. */
export function parseStoredKey(text: string): StoredKey | undefined {
  try {
    return decodeStoredKey(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** A new key's identity: 128 random bits, base64url. */
export const newKeyUid = (): string => randomBytes(16).toString('base64url');

/**
 * The record's identity: its uid, or for a record written before keys had
 * one, its id and the instant it was made (which a key made again under
 * the id never shares: it is made later, and gets a uid).
 */
export const identityOf = (record: StoredKey): string => record.uid ?? `${record.id}.${Date.parse(record.createdAt)}`;

/** What each of the record's digests authenticates as: its key, and during a rotation's grace period the old one. */
export function credentialsOf(record: StoredKey, tenants?: TenantAllowLists): Array<[digest: string, credential: Credential]> {
  const principal = principalOf(record.id, record.entry, identityOf(record), tenants);
  const expiresAt = record.expiresAt === undefined ? undefined : Date.parse(record.expiresAt);
  const out: Array<[string, Credential]> = [[record.sha256, { principal, expiresAt }]];
  if (record.previous !== undefined) {
    const until = Date.parse(record.previous.until);
    out.push([record.previous.sha256, { principal, expiresAt: expiresAt === undefined ? until : Math.min(until, expiresAt), rotated: expiresAt === undefined || until < expiresAt }]);
  }
  return out;
}

/** A key as the admin API shows it: its entry's fields, flat, then its lifetime. Never a digest. */
export function keyView(record: StoredKey, now = Date.now()): Record<string, unknown> {
  const { org, team, models, limits, priority, ...rest } = record.entry;
  const graceUntil = record.previous !== undefined && Date.parse(record.previous.until) > now ? record.previous.until : null;
  return {
    id: record.id,
    source: 'runtime',
    org: org ?? null,
    team: team ?? null,
    models: models ?? null,
    limits: limits ?? null,
    priority: priority ?? 'normal',
    ...rest,
    expiresAt: record.expiresAt ?? null,
    expired: record.expiresAt !== undefined && Date.parse(record.expiresAt) <= now,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    rotation: graceUntil === null ? null : { graceUntil },
  };
}

/** A config file's key, as the admin API shows it (read only: it changes in the file). */
export function configKeyView(key: { id: string } & KeyEntry): Record<string, unknown> {
  const { id, sha256: _digest, org, team, models, limits, priority, ...rest } = key;
  return { id, source: 'config', org: org ?? null, team: team ?? null, models: models ?? null, limits: limits ?? null, priority: priority ?? 'normal', ...rest, expiresAt: null, expired: false };
}
