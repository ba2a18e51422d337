// `sluice keys create` and `sluice keys hash` (offline): mint keys and
// digests so no operator edits a hash by hand. The key is printed once and
// stored nowhere.
import { hashKey, newKey } from '../auth/keys';

export interface KeyEntryOptions {
  id: string;
  org?: string;
  models?: string[];
}

export function keyEntryYaml(digest: string, o: KeyEntryOptions): string {
  const parts = [`id: ${o.id}`, `sha256: "${digest}"`];
  if (o.org) parts.push(`org: ${o.org}`);
  if (o.models && o.models.length > 0) parts.push(`models: [${o.models.map((m) => JSON.stringify(m)).join(', ')}]`);
  return `  - { ${parts.join(', ')} }`;
}

export function createKey(o: KeyEntryOptions): { key: string; entry: string } {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(o.id)) throw new Error('--id must be 1-64 letters, digits, dot, dash or underscore');
  const key = newKey();
  return { key, entry: keyEntryYaml(hashKey(key), o) };
}

/** The digest of a key read from stdin: surrounding whitespace and the final newline are not part of it. */
export const hashInput = (input: string): string => {
  const key = input.trim();
  if (key === '') throw new Error('no key on stdin');
  return hashKey(key);
};

/** A new admin key and its line under admin.keys. */
export function adminKeyEntry(): { key: string; entry: string } {
  const key = newKey();
  return { key, entry: `    - "${hashKey(key)}"` };
}
