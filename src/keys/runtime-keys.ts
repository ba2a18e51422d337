// The keys made through the admin API that this process honours, by digest:
// what the key index consults behind the config's keys; and the teams in
// force (the config's and the runtime ones, src/teams/teams.ts), which the
// same sources keep current and the same version counts. One per process,
// kept across reloads; its source (the keys file, Redis, or with workers the
// primary) keeps it current. A record that did not change keeps its
// credential, so per-key policy compiled for it (src/admission/scopes.ts,
// the rate-limit plugin) stays; a changed one gets a new principal.
//
//   const keys = new RuntimeKeys();
//   keys.put(record); keys.remove('ci-bot'); keys.replace(all);
//   keys.get(digest)   // what buildKeyIndex calls, on the hot path
import type { Credential, CredentialSource } from '../auth/keys';
import { Teams } from '../teams/teams';
import type { StoredTeam } from '../teams/stored-team';
import { credentialsOf, type StoredKey } from './stored-key';

interface Held {
  record: StoredKey;
  /** The record's JSON: what tells a change from a repeat. */
  json: string;
  digests: string[];
}

export class RuntimeKeys implements CredentialSource {
  /** The teams in force: the config's, and the runtime ones this source keeps beside the keys. */
  readonly teams = new Teams();
  private readonly byDigest = new Map<string, Credential>();
  private readonly byId = new Map<string, Held>();
  private readonly listeners = new Set<() => void>();
  /** Counts the changes: a worker asks the primary for what is newer than the version it holds. */
  private changes = 0;

  get version(): number {
    return this.changes;
  }

  get(digest: string): Credential | undefined {
    return this.byDigest.get(digest);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  record(id: string): StoredKey | undefined {
    return this.byId.get(id)?.record;
  }

  list(): StoredKey[] {
    return [...this.byId.values()].map((h) => h.record).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** Adds or changes one key. */
  put(record: StoredKey): void {
    if (this.set(record)) this.changed();
  }

  /** Drops one key (revoked): none of its digests authenticates from now on. */
  remove(id: string): void {
    if (this.drop(id)) this.changed();
  }

  /** Adds or changes one runtime team. */
  putTeam(record: StoredTeam): void {
    if (this.teams.put(record)) this.changed();
  }

  /** Drops one runtime team. */
  removeTeam(name: string): void {
    if (this.teams.remove(name)) this.changed();
  }

  /** The ids of the runtime keys that name the team. */
  keysIn(team: string): string[] {
    const out: string[] = [];
    for (const held of this.byId.values()) if (held.record.entry.team === team) out.push(held.record.id);
    return out;
  }

  /** Makes the set exactly these records (a full reload, a worker's snapshot); `teams` given: the runtime teams too. */
  replace(records: readonly StoredKey[], teams?: readonly StoredTeam[]): void {
    const ids = new Set(records.map((r) => r.id));
    let changed = teams !== undefined && this.teams.replace(teams);
    for (const id of [...this.byId.keys()]) if (!ids.has(id)) changed = this.drop(id) || changed;
    for (const record of records) changed = this.set(record) || changed;
    if (changed) this.changed();
  }

  /** Calls `listener` after each change; returns what stops it. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(record: StoredKey): boolean {
    const json = JSON.stringify(record);
    if (this.byId.get(record.id)?.json === json) return false;
    this.drop(record.id);
    const credentials = credentialsOf(record, this.teams);
    for (const [digest, credential] of credentials) this.byDigest.set(digest, credential);
    this.byId.set(record.id, { record, json, digests: credentials.map(([d]) => d) });
    return true;
  }

  private drop(id: string): boolean {
    const held = this.byId.get(id);
    if (held === undefined) return false;
    for (const digest of held.digests) this.byDigest.delete(digest);
    this.byId.delete(id);
    return true;
  }

  private changed(): void {
    this.changes++;
    for (const listener of this.listeners) listener();
  }
}
