// What the gateway keeps of a stored response, and the one interface every
// place that keeps it implements (this process's memory, the primary's for
// the workers, Redis for the replicas). A record belongs to an owner: a key
// reads, continues and deletes only what its owner stored, and anything else
// reads exactly as absent, so a response id of another owner is a 404 like
// one that never existed (no existence oracle). Each owner's records are
// bounded in count and bytes (the oldest go first, counted as evicted), and
// so are the ids of a native backend's responses the gateway relayed without
// keeping them (`remember`): an owner continues only from an id it was given.
import type { GatewayConfig } from '../config/schema';
import { GatewayError } from '../contract/errors';
import type { Principal } from '../contract/types';
import type { StoredItem } from '../protocols/responses/items';
import type { ResponseObject } from '../protocols/responses/types';

export interface StoredResponse {
  /** Who may read it: `org:<org>`, or the key's own scope for a key without an org (see ownerOf). Never key material. */
  owner: string;
  /** The response object as the client got it: `in_progress` while it runs, then final. */
  response: ResponseObject;
  /** Its input items, for GET /v1/responses/{id}/input_items. */
  input: StoredItem[];
  /** What a later turn continues from: historyItems(req, response, earlier). */
  history: StoredItem[];
}

export interface ResponseStore {
  /**
   * Keeps `record` under `id` for the TTL, replacing what was there. Resolves
   * false, keeping nothing under `id`, when its JSON is over the per-response
   * cap; rejects with `store_unavailable` when the store cannot answer.
   */
  put(id: string, record: StoredResponse): Promise<boolean>;
  /** The record, or undefined when it is absent, expired or another owner's. */
  get(id: string, owner: string): Promise<StoredResponse | undefined>;
  /** True when it was there and `owner`'s, and is gone now; false when absent or another owner's. */
  delete(id: string, owner: string): Promise<boolean>;
  /**
   * Keeps, for the TTL, that a native backend's own response `id` was relayed
   * to `owner` (its content stays with the backend): counted in the owner's
   * bounds like a tiny record, read by `owns` and by nothing else.
   */
  remember(id: string, owner: string): Promise<void>;
  /** Whether `id` is `owner`'s: stored, or remembered, and alive. */
  owns(id: string, owner: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface StoreLimits {
  ttlMs: number;
  /** Largest record, as the UTF-8 bytes of its JSON. */
  maxResponseBytes: number;
  /** A memory store's total (Redis bounds its own memory). */
  maxBytes: number;
  /** Most records (remembered ids included) one owner keeps; past it the owner's oldest go. */
  ownerMaxResponses: number;
  /** Most bytes one owner's records take (each as its JSON, its id and ENTRY_OVERHEAD); past it the owner's oldest go. */
  ownerMaxBytes: number;
}

/** What one record costs besides its JSON (its id, the index entries, the entry object), so many tiny records stay bounded too. */
export const ENTRY_OVERHEAD = 256;

/** Which bound pushed records out: the owner's (count or bytes) or a memory store's total. */
export type EvictionBound = 'owner' | 'total';
/** Told of the records a store let go to stay within a bound (sluice_responses_evicted_total). */
export type EvictionSink = (bound: EvictionBound, count: number) => void;

/** What a write pushed out, by bound; false: the record was not kept (over a cap). */
export type PutOutcome = false | { owner: number; total: number };

/** Tells `sink` what a write pushed out; true when the record was kept. */
export function reportPut(outcome: PutOutcome, sink: EvictionSink | undefined): boolean {
  if (outcome === false) return false;
  if (outcome.owner > 0) sink?.('owner', outcome.owner);
  if (outcome.total > 0) sink?.('total', outcome.total);
  return true;
}

/** The limits of the config's `responses` section. */
export const limitsOf = (settings: GatewayConfig['responses']): StoreLimits => ({
  ttlMs: settings.ttlSeconds * 1000, maxResponseBytes: settings.maxResponseBytes, maxBytes: settings.memoryMaxBytes,
  ownerMaxResponses: settings.ownerMaxResponses, ownerMaxBytes: settings.ownerMaxBytes,
});

/**
 * The scope a key stores in: its org, so the keys of one org share their
 * responses as OpenAI's project keys do; a key without an org is a scope of
 * its own: a config key's id, a runtime key's id and identity (its uid), so
 * a key made again under a revoked key's id is another scope. All are
 * tagged, so an org named like a key id is another scope.
 */
export const ownerOf = (principal: Pick<Principal, 'id' | 'org' | 'uid'>): string =>
  principal.org !== null ? `org:${principal.org}` : principal.uid === undefined ? `key:${principal.id}` : `key:${principal.id}@${principal.uid}`;

/** An encoded record: its JSON and the UTF-8 bytes the caps count. */
export interface Encoded { json: string; bytes: number }

/** The record's JSON, or undefined when it is over the cap. */
export function encodeRecord(record: StoredResponse, maxBytes: number): Encoded | undefined {
  const json = JSON.stringify(record);
  const bytes = Buffer.byteLength(json, 'utf8');
  return bytes <= maxBytes ? { json, bytes } : undefined;
}

export const decodeRecord = (json: string): StoredResponse => JSON.parse(json) as StoredResponse;

/** The ids a stored response can have (`resp_…` or a native backend's own); any other id cannot be stored, so it is simply absent. */
const ID = /^[A-Za-z0-9_.:-]{1,200}$/;
export const isResponseId = (id: string): boolean => ID.test(id);

/** The store could not answer (Redis down, the primary stuck): 503, try again. */
export const storeUnavailable = (cause: unknown): GatewayError =>
  new GatewayError('store_unavailable', 'The response store cannot answer right now; try again shortly.', { headers: { 'retry-after': '1' }, cause });
