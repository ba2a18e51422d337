// Rewrites the strings of a request body that a model reads as text, leaving
// the ones that name or address something (roles, ids, tool names, types,
// URLs, encoded data) as they are, so a rewrite never breaks the request's
// structure. Copy on write: what has no changed string is returned as it
// came, so a body shared with a store (an earlier turn's items) is never
// changed under it.
//
//   const redacted = rewriteStrings(request.messages, (s) => s.replace(EMAIL, '[EMAIL]'));

/** Keys whose string values are names, ids, enumerations or data rather than text. */
const NOT_TEXT = new Set([
  'model', 'type', 'role', 'id', 'call_id', 'tool_call_id', 'tool_use_id', 'previous_response_id', 'name', 'namespace',
  'url', 'image_url', 'file_id', 'file_data', 'file_url', 'media_type', 'detail', 'signature', 'encrypted_content', 'status', 'data',
]);

/** Objects whose every string is the caller's data (a tool call's input, metadata): nothing in them is a name. */
const isFreeData = (key: string, parent: Record<string, unknown>): boolean =>
  key === 'metadata' || (key === 'input' && typeof parent.type === 'string' && parent.type.endsWith('tool_use'));

/** A string under `key` the rewrite leaves alone; a document's text source (`data` of a `text` source) is text. */
const kept = (key: string, parent: Record<string, unknown>): boolean => NOT_TEXT.has(key) && !(key === 'data' && parent.type === 'text');

const MAX_DEPTH = 64;

export type Rewrite = (text: string) => string;

/**
 * `free`: every string of `value` is the caller's data (a tool call's input),
 * names included. `keys`: the keys of the caller's data (metadata, a tool
 * call's input) are rewritten too, as the texts they are: a model reads
 * `{"bob@example.com": 1}` as it reads the value.
 */
export function rewriteStrings<T>(value: T, fn: Rewrite, free = false, keys = false): T {
  return walk(value, fn, free, keys, 0) as T;
}

function walk(value: unknown, fn: Rewrite, free: boolean, keys: boolean, depth: number): unknown {
  if (typeof value === 'string') return fn(value);
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = walk(value[i], fn, free, keys, depth + 1);
      if (next !== value[i]) (out ??= value.slice())[i] = next;
    }
    return out ?? value;
  }
  const record = value as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  let names: Map<string, string> | undefined;
  for (const key in record) {
    const v = record[key];
    if (free && keys) {
      const name = fn(key);
      if (name !== key) (names ??= new Map()).set(key, name);
    }
    if (!free && typeof v === 'string' && kept(key, record)) continue;
    const next = walk(v, fn, free || isFreeData(key, record), keys, depth + 1);
    if (next !== v) (out ??= { ...record })[key] = next;
  }
  return names === undefined ? out ?? value : renamed(out ?? record, names);
}

/** A copy with keys renamed, in order (defined, so "__proto__" stays a key); two keys renamed alike are one, the later value kept. */
const renamed = (record: Record<string, unknown>, names: Map<string, string>): Record<string, unknown> =>
  Object.fromEntries(Object.keys(record).map((key) => [names.get(key) ?? key, record[key]]));
