// The runtime keys in Redis, shared by every replica: one hash,
// <prefix>keys, field = key id, value = the record's JSON (one key, so a
// Redis Cluster keeps it whole and a full read is one HGETALL). The runtime
// teams live in the same hash under `team:<name>` (a key id has no colon), so
// a team's delete sees every key that names it in the same step. Every write
// is a script that changes the hash and publishes the field on
// <prefix>keys:changed in the same step, so no replica hears of a change
// before it can read it. A change is compared and set: a concurrent one
// (another admin, another replica) is read again, never overwritten, and a
// revoked key cannot come back through a late update.
import type { RedisClient } from '../contract/types';
import { parseStoredTeam, type StoredTeam } from '../teams/stored-team';
import { parseStoredKey, type StoredKey } from './stored-key';
import type { RuntimeKeys } from './runtime-keys';
import { keyStoreUnavailable, teamGone, type KeyStore } from './store';

export const keysHash = (prefix: string): string => `${prefix}keys`;
export const keysChannel = (prefix: string): string => `${prefix}keys:changed`;
/** A team's field in the hash, and what the channel carries for it. */
export const TEAM_FIELD = 'team:';

// KEYS[1] the hash; ARGV[1] the channel (not a key: a cluster would refuse it in another slot), ARGV[2] the field, ARGV[3] the record;
// ARGV[4] a field that must be there ('' none): a key's runtime team, so a key never lands in a team deleted meanwhile (-2).
const CREATE = `if ARGV[4] ~= '' and redis.call('HEXISTS', KEYS[1], ARGV[4]) == 0 then return -2 end
if redis.call('HSETNX', KEYS[1], ARGV[2], ARGV[3]) == 1 then redis.call('PUBLISH', ARGV[1], ARGV[2]) return 1 end return 0`;
// ARGV[4] the record as it was read, ARGV[5] as CREATE's ARGV[4]: 1 set, 0 gone, -1 changed meanwhile, -2 the team is gone.
const SWAP = `local now = redis.call('HGET', KEYS[1], ARGV[2])
if not now then return 0 end
if now ~= ARGV[4] then return -1 end
if ARGV[5] ~= '' and redis.call('HEXISTS', KEYS[1], ARGV[5]) == 0 then return -2 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3]) redis.call('PUBLISH', ARGV[1], ARGV[2]) return 1`;
const REMOVE = `local now = redis.call('HGET', KEYS[1], ARGV[2])
if now then redis.call('HDEL', KEYS[1], ARGV[2]) redis.call('PUBLISH', ARGV[1], ARGV[2]) end return now`;
// A team goes only while no key names it: ARGV[3] the team's name. {record} removed, {} none, {false, id…} the keys that name it.
const REMOVE_TEAM = `local now = redis.call('HGET', KEYS[1], ARGV[2])
if not now then return {} end
local all = redis.call('HGETALL', KEYS[1])
local users = {false}
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 5) ~= 'team:' then
    local ok, record = pcall(cjson.decode, all[i + 1])
    if ok and type(record) == 'table' and type(record.entry) == 'table' and record.entry.team == ARGV[3] then users[#users + 1] = all[i] end
  end
end
if #users > 1 then return users end
redis.call('HDEL', KEYS[1], ARGV[2]) redis.call('PUBLISH', ARGV[1], ARGV[2]) return {now}`;

/** Tries of a compare-and-set before it gives up (each lost to another writer). */
const SWAP_TRIES = 5;

export class RedisKeyStore implements KeyStore {
  readonly where = 'redis';
  private readonly hash: string;
  private readonly channel: string;

  constructor(private readonly client: RedisClient, readonly prefix: string, private readonly keys: RuntimeKeys) {
    this.hash = keysHash(prefix);
    this.channel = keysChannel(prefix);
  }

  /** Every key and team in the hash; fields that are neither are left out (and named in `skipped`). */
  async readAll(skipped: string[] = []): Promise<{ keys: StoredKey[]; teams: StoredTeam[] }> {
    const all = await this.ask(() => this.client.hgetall(this.hash));
    const keys: StoredKey[] = [];
    const teams: StoredTeam[] = [];
    for (const [field, json] of Object.entries(all)) {
      if (field.startsWith(TEAM_FIELD)) {
        const team = parseStoredTeam(json);
        if (team !== undefined && `${TEAM_FIELD}${team.name}` === field) teams.push(team); else skipped.push(field);
        continue;
      }
      const record = parseStoredKey(json);
      if (record?.id === field) keys.push(record); else skipped.push(field);
    }
    return { keys, teams };
  }

  async list(): Promise<StoredKey[]> {
    return (await this.readAll()).keys.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async get(id: string): Promise<StoredKey | undefined> {
    const json = await this.ask(() => this.client.hget(this.hash, id));
    return json === null ? undefined : parseStoredKey(json);
  }

  /** The field a key's record needs in the hash: its team's, when that is a runtime team ('' otherwise). */
  private teamField = (record: StoredKey): string => {
    const team = record.entry.team;
    return team === undefined || this.keys.teams.isConfigured(team) ? '' : `${TEAM_FIELD}${team}`;
  };

  async create(record: StoredKey): Promise<boolean> {
    const made = await this.ask(() => this.client.eval(CREATE, 1, this.hash, this.channel, record.id, JSON.stringify(record), this.teamField(record)));
    if (made === -2) throw teamGone(record.entry.team!);
    if (made === 1) this.keys.put(record);
    return made === 1;
  }

  async update(id: string, change: (current: StoredKey) => StoredKey): Promise<StoredKey | undefined> {
    const next = await this.swap(id, parseStoredKey, change, this.teamField);
    if (next !== undefined) this.keys.put(next);
    return next;
  }

  async remove(id: string): Promise<StoredKey | undefined> {
    const json = await this.ask(() => this.client.eval(REMOVE, 1, this.hash, this.channel, id)) as string | null;
    this.keys.remove(id);
    return json === null ? undefined : parseStoredKey(json);
  }

  async listTeams(): Promise<StoredTeam[]> {
    return (await this.readAll()).teams.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async getTeam(name: string): Promise<StoredTeam | undefined> {
    const json = await this.ask(() => this.client.hget(this.hash, `${TEAM_FIELD}${name}`));
    return json === null ? undefined : parseStoredTeam(json);
  }

  async createTeam(record: StoredTeam): Promise<boolean> {
    const made = await this.ask(() => this.client.eval(CREATE, 1, this.hash, this.channel, `${TEAM_FIELD}${record.name}`, JSON.stringify(record), ''));
    if (made === 1) this.keys.putTeam(record);
    return made === 1;
  }

  async updateTeam(name: string, change: (current: StoredTeam) => StoredTeam): Promise<StoredTeam | undefined> {
    const next = await this.swap(`${TEAM_FIELD}${name}`, parseStoredTeam, change);
    if (next !== undefined) this.keys.putTeam(next);
    return next;
  }

  async removeTeam(name: string): Promise<StoredTeam | string[] | undefined> {
    const answer = await this.ask(() => this.client.eval(REMOVE_TEAM, 1, this.hash, this.channel, `${TEAM_FIELD}${name}`, name)) as Array<string | null>;
    if (answer.length === 0) {
      this.keys.removeTeam(name);
      return undefined;
    }
    if (answer[0] === null) return answer.slice(1) as string[];
    this.keys.removeTeam(name);
    return parseStoredTeam(answer[0]);
  }

  async close(): Promise<void> {}

  /** Compare and set of one field's record: the new one, or undefined when there is none; `needs`: the field the new one needs there. */
  private async swap<T>(field: string, parse: (json: string) => T | undefined, change: (current: T) => T, needs: (next: T) => string = () => ''): Promise<T | undefined> {
    for (let i = 0; i < SWAP_TRIES; i++) {
      const json = await this.ask(() => this.client.hget(this.hash, field));
      const current = json === null ? undefined : parse(json);
      if (current === undefined) return undefined;
      const next = change(current);
      const set = await this.ask(() => this.client.eval(SWAP, 1, this.hash, this.channel, field, JSON.stringify(next), json!, needs(next)));
      if (set === -2) throw teamGone(needs(next).slice(TEAM_FIELD.length));
      if (set === 0) return undefined;
      if (set === 1) return next;
    }
    throw keyStoreUnavailable(this.where, new Error(`${field} kept changing under ${SWAP_TRIES} tries`));
  }

  private async ask<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (err) {
      throw keyStoreUnavailable(this.where, err);
    }
  }
}
