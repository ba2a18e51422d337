// What the gateway keeps of a stored response, and the one interface every
// place that keeps it implements (this process's memory, the primary's for
// the workers, Redis for the replicas). A record belongs to an owner: a key
// reads, continues and deletes only what its owner stored, and anything else
// reads exactly as absent, so a response id of another owner is a 404 like
// one that never existed (no existence oracle).
import type { GatewayConfig } from '../../../config/schema';
import { GatewayError } from '../../../errors';
import type { Principal } from '../../../types';
import type { StoredItem } from '../items';
import type { ResponseObject } from '../types';

export interface StoredResponse {
  /** Who may read it: `org:<org>`, or `key:<id>` for a key without an org (see ownerOf). Never key material. */
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
  close(): Promise<void>;
}

export interface StoreLimits {
  ttlMs: number;
  /** Largest record, as the UTF-8 bytes of its JSON. */
  maxResponseBytes: number;
  /** A memory store's total (Redis bounds its own memory). */
  maxBytes: number;
}

/** The limits of the config's `responses` section. */
export const limitsOf = (settings: GatewayConfig['responses']): StoreLimits =>
  ({ ttlMs: settings.ttlSeconds * 1000, maxResponseBytes: settings.maxResponseBytes, maxBytes: settings.memoryMaxBytes });

/**
 * The scope a key stores in: its org, so the keys of one org share their
 * responses as OpenAI's project keys do; a key without an org is a scope of
 * its own. Both are tagged, so an org named like a key id is another scope.
 */
export const ownerOf = (principal: Pick<Principal, 'id' | 'org'>): string =>
  principal.org !== null ? `org:${principal.org}` : `key:${principal.id}`;

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
