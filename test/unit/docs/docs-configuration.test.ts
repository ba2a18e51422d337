// docs/configuration.md against the config schema: every top-level section
// and every field one level inside it (a section's own fields, or the fields
// of each entry of a list or map) is named in the page's table, so a field
// added to the schema without a line in the docs fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema } from '../../../src/config/schema';

const page = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'configuration.md'), 'utf8');
/** The rows of the page's tables, as [first cell, whole row]. */
const rows = page.split('\n').filter((l) => l.startsWith('| `')).map((l) => [l.split('|')[1], l] as const);

type Schema = { def: { type: string; innerType?: Schema; in?: Schema; out?: Schema; element?: Schema; valueType?: Schema; shape?: Record<string, Schema> }; shape?: Record<string, Schema> };

/** The object inside optional, default, nullable, pipes, lists and maps; undefined when there is none. */
function objectIn(s: Schema): Record<string, Schema> | undefined {
  const d = s.def;
  if (d.type === 'object') return s.shape ?? d.shape;
  const inner = d.innerType ?? d.in ?? d.element ?? d.valueType;
  return inner === undefined ? undefined : objectIn(inner);
}

const word = (name: string) => new RegExp(`(^|[^A-Za-z0-9_])${name}([^A-Za-z0-9_]|$)`);
const top = objectIn(configSchema as unknown as Schema)!;

describe('docs/configuration.md', () => {
  it('names every section of the config', () => {
    expect(Object.keys(top).filter((k) => !rows.some(([first]) => word(k).test(first)))).toEqual([]);
  });

  it.each(Object.keys(top).filter((k) => objectIn(top[k]) !== undefined))('names every field of %s', (section) => {
    const fields = Object.keys(objectIn(top[section])!);
    // A field is named in a row about its section (its first cell names the section), or in a row of its own.
    const about = rows.filter(([first]) => word(section).test(first)).map(([, row]) => row);
    const missing = fields.filter((f) => !about.some((row) => word(f).test(row)) && !rows.some(([first]) => word(f).test(first)));
    expect(missing).toEqual([]);
  });
});
