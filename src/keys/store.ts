// Where the runtime keys are kept: the keys file (one gateway process, or
// the primary of its workers) or Redis (every replica). The admin API writes
// through a store; each write also reaches this process's RuntimeKeys at
// once, so the key answers here before the API does.
import { GatewayError } from '../contract/errors';
import type { StoredTeam } from '../teams/stored-team';
import type { StoredKey } from './stored-key';

export interface KeyStore {
  /** Where the keys live, for the log: "redis" or the file's path. */
  readonly where: string;
  list(): Promise<StoredKey[]>;
  get(id: string): Promise<StoredKey | undefined>;
  /** False when the id is taken. */
  create(record: StoredKey): Promise<boolean>;
  /**
   * Replaces the record with `change(current)`, unless it changed meanwhile
   * (then `change` runs again on the newer one). Undefined when there is no
   * such key. `change` may throw to refuse.
   */
  update(id: string, change: (current: StoredKey) => StoredKey): Promise<StoredKey | undefined>;
  /** The record it removed, or undefined when there was none. */
  remove(id: string): Promise<StoredKey | undefined>;
  /** The runtime teams, kept beside the keys, with the same writes' guarantees. */
  listTeams(): Promise<StoredTeam[]>;
  getTeam(name: string): Promise<StoredTeam | undefined>;
  /** False when the name is taken. */
  createTeam(record: StoredTeam): Promise<boolean>;
  updateTeam(name: string, change: (current: StoredTeam) => StoredTeam): Promise<StoredTeam | undefined>;
  /** The record it removed; undefined when there was none; the ids of the keys that name it when some do (then nothing is removed). */
  removeTeam(name: string): Promise<StoredTeam | string[] | undefined>;
  close(): Promise<void>;
}

/** A store that cannot answer: 503, the cause kept for the log. */
export const keyStoreUnavailable = (where: string, cause: unknown): GatewayError =>
  new GatewayError('store_unavailable', `The runtime keys' store (${where}) cannot answer now. Try again shortly; a change may or may not have been made, so read the key first (GET /admin/keys/{id}).`, { headers: { 'retry-after': '1' }, cause });

/** A key made or moved into a runtime team that was deleted meanwhile (between the check of its input and its write). */
export const teamGone = (team: string): GatewayError =>
  new GatewayError('invalid_request', `team: unknown team "${team}" (it was deleted meanwhile); make it again with POST /admin/teams, or name another team`, { param: 'team' });
