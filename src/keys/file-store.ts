// The runtime keys without Redis: one JSON file beside the config
// (<config>.keys.json, or admin.keysFile), read at start and written whole
// on every change: to a temporary file, then renamed over the old one, so a
// crash leaves the old file or the new one, never half of one. This process
// is its only writer (one gateway, or the primary of its workers); its
// RuntimeKeys are the file's content, changed only once the file is.
//
//   {"keys": [<record>, …], "teams": [<team>, …]}     (src/keys/stored-key.ts, src/teams/stored-team.ts)
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { decodeStoredTeam, type StoredTeam } from '../teams/stored-team';
import { decodeStoredKey, type StoredKey } from './stored-key';
import type { RuntimeKeys } from './runtime-keys';
import { keyStoreUnavailable, teamGone, type KeyStore } from './store';

/** The keys file cannot be read as one: the start (or reload) that found it stops, and nothing overwrites it. */
export class KeysFileError extends Error {
  constructor(readonly path: string, why: string) {
    super(`the runtime keys file ${path} (admin.keysFile): ${why}; fix or move it`);
    this.name = 'KeysFileError';
  }
}

/** The records of a keys file; none when it does not exist yet. */
export function readKeysFile(path: string): { keys: StoredKey[]; teams: StoredTeam[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { keys: [], teams: [] };
    throw new KeysFileError(path, (err as Error).message);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new KeysFileError(path, 'not valid JSON');
  }
  const list = (parsed as { keys?: unknown } | null)?.keys;
  const teamList = (parsed as { teams?: unknown } | null)?.teams ?? [];
  if (!Array.isArray(list)) throw new KeysFileError(path, 'not {"keys": [...]}');
  if (!Array.isArray(teamList)) throw new KeysFileError(path, '"teams" is not a list');
  const keys = list.map((value, i) => {
    const record = decodeStoredKey(value);
    if (record === undefined) throw new KeysFileError(path, `keys[${i}] is not a runtime key record`);
    return record;
  });
  const teams = teamList.map((value, i) => {
    const record = decodeStoredTeam(value);
    if (record === undefined) throw new KeysFileError(path, `teams[${i}] is not a runtime team record`);
    return record;
  });
  return { keys, teams };
}

export class FileKeyStore implements KeyStore {
  /** Writes one after another: each reads the set the one before left. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly where: string, private readonly keys: RuntimeKeys) {}

  /** Reads the file into the RuntimeKeys (throws KeysFileError when it is not a keys file). */
  load(): void {
    const { keys, teams } = readKeysFile(this.where);
    this.keys.replace(keys, teams);
  }

  async list(): Promise<StoredKey[]> {
    return this.keys.list();
  }

  async get(id: string): Promise<StoredKey | undefined> {
    return this.keys.record(id);
  }

  create(record: StoredKey): Promise<boolean> {
    return this.serial(async () => {
      if (this.keys.has(record.id)) return false;
      this.needTeam(record);
      await this.write([...this.keys.list(), record], this.keys.teams.list());
      this.keys.put(record);
      return true;
    });
  }

  update(id: string, change: (current: StoredKey) => StoredKey): Promise<StoredKey | undefined> {
    return this.serial(async () => {
      const current = this.keys.record(id);
      if (current === undefined) return undefined;
      const next = change(current);
      this.needTeam(next);
      await this.write(this.keys.list().map((r) => (r.id === id ? next : r)), this.keys.teams.list());
      this.keys.put(next);
      return next;
    });
  }

  remove(id: string): Promise<StoredKey | undefined> {
    return this.serial(async () => {
      const current = this.keys.record(id);
      if (current === undefined) return undefined;
      await this.write(this.keys.list().filter((r) => r.id !== id), this.keys.teams.list());
      this.keys.remove(id);
      return current;
    });
  }

  async listTeams(): Promise<StoredTeam[]> {
    return this.keys.teams.list();
  }

  async getTeam(name: string): Promise<StoredTeam | undefined> {
    return this.keys.teams.record(name);
  }

  createTeam(record: StoredTeam): Promise<boolean> {
    return this.serial(async () => {
      if (this.keys.teams.record(record.name) !== undefined) return false;
      await this.write(this.keys.list(), [...this.keys.teams.list(), record]);
      this.keys.putTeam(record);
      return true;
    });
  }

  updateTeam(name: string, change: (current: StoredTeam) => StoredTeam): Promise<StoredTeam | undefined> {
    return this.serial(async () => {
      const current = this.keys.teams.record(name);
      if (current === undefined) return undefined;
      const next = change(current);
      await this.write(this.keys.list(), this.keys.teams.list().map((t) => (t.name === name ? next : t)));
      this.keys.putTeam(next);
      return next;
    });
  }

  removeTeam(name: string): Promise<StoredTeam | string[] | undefined> {
    return this.serial(async () => {
      const current = this.keys.teams.record(name);
      if (current === undefined) return undefined;
      const users = this.keys.keysIn(name);
      if (users.length > 0) return users;
      await this.write(this.keys.list(), this.keys.teams.list().filter((t) => t.name !== name));
      this.keys.removeTeam(name);
      return current;
    });
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  /** A key's team must be there when the key is written (writes are serial: nothing deletes it meanwhile). */
  private needTeam(record: StoredKey): void {
    const team = record.entry.team;
    if (team !== undefined && this.keys.teams.get(team) === undefined) throw teamGone(team);
  }

  private serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async write(records: StoredKey[], teams: StoredTeam[]): Promise<void> {
    const temp = `${this.where}.${process.pid}.tmp`;
    try {
      await writeFile(temp, `${JSON.stringify({ keys: records, teams }, null, 2)}\n`, { mode: 0o600 });
      await rename(temp, this.where);
    } catch (err) {
      throw keyStoreUnavailable(this.where, err);
    }
  }
}
