// Captured agent-client requests as fixtures (test/fixtures/): the ground
// truth for the protocol translation tables. A capture is scrubbed of what
// is secret or belongs to the machine (the key, the temp paths, random ids),
// and its shape (top-level fields, tools, item types, header names) is what
// the client tests compare, so a client upgrade that changes its requests
// fails until the fixtures are captured again (SLUICE_WRITE_FIXTURES=1).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedRequest } from './json-server';

export const FIXTURES = join(__dirname, '..', 'fixtures');
export const WRITE_FIXTURES = process.env.SLUICE_WRITE_FIXTURES === '1';
// UUIDs (bare or prefixed, as in msg_<uuid>) and 64-hex device ids.
const ID_PATTERN = /(?<![0-9a-f])(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{64})(?![0-9a-f])/g;

export interface Scrub {
  /** Text replaced everywhere, e.g. [tempDir, '/work/project'], [key, '<gateway-key>']. */
  replace: Array<[string, string]>;
}

/** The JSON text with the replacements made and each random id turned into a stable stand-in. */
function scrubText(text: string, scrub: Scrub): string {
  let out = text;
  for (const [from, to] of scrub.replace) out = out.split(from).join(to);
  const ids = new Map<string, string>();
  return out.replace(ID_PATTERN, (id) => {
    if (!ids.has(id)) {
      const n = String(ids.size + 1).padStart(12, '0');
      ids.set(id, id.length === 64 ? `${'0'.repeat(52)}${n}` : `00000000-0000-4000-8000-${n}`);
    }
    return ids.get(id)!;
  });
}

export const scrubbed = <T>(value: T, scrub: Scrub): T => JSON.parse(scrubText(JSON.stringify(value), scrub));

/** What a request looks like to a translator: method, path, header names and the body's structure. */
export function requestShape(request: Pick<RecordedRequest, 'method' | 'url' | 'headers' | 'body'>): Record<string, unknown> {
  const body = request.body ?? {};
  const toolNames = (tools: unknown): string[] => (Array.isArray(tools)
    ? tools.flatMap((t: any) => (t?.type === 'namespace' ? toolNames(t.tools).map((n) => `${t.name}.${n}`) : [String(t?.name ?? t?.type)]))
    : []);
  const items = Array.isArray(body.input) ? body.input : Array.isArray(body.messages) ? body.messages : [];
  return {
    method: request.method,
    path: request.url,
    headers: Object.keys(request.headers).filter((h) => h !== 'content-length').sort(),
    fields: Object.keys(body).sort(),
    tools: toolNames(body.tools),
    items: items.map((item: any) => [item.type, item.role].filter(Boolean).join(':')),
  };
}

/** Writes a fixture when capturing (and `write`), then reads the one in the repo (undefined when it is missing). */
export function fixture(name: string, captured: unknown, write = true): any {
  const file = join(FIXTURES, name);
  if (WRITE_FIXTURES && write) writeFileSync(file, `${JSON.stringify(captured, null, 2)}\n`);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/** A recorded request's headers with the auth value and the port stood in for. */
export function scrubbedHeaders(request: RecordedRequest, scrub: Scrub): Record<string, unknown> {
  const headers = { ...request.headers };
  delete headers['content-length'];
  return { method: request.method, path: request.url, headers: scrubbed(headers, scrub) };
}
