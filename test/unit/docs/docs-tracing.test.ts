// The traces page names every attribute, span and event name the tracing
// code writes (src/tracing), and no name the code no longer writes: the
// first column of its Span, Attribute and Event tables, against the quoted
// names in the source.
import { readFileSync } from 'node:fs';
import { repoFiles } from '../../support/log-calls';
import { readRepoFile, tablesIn } from '../../support/markdown';

/** A dotted name in one of the namespaces traces use. */
const NAME = /^(gen_ai|sluice|http|server|error|url|service|process)\.[a-z_.]+$/;

/** Every quoted dotted name in these files. */
const namesInSource = (dirs: readonly string[]): string[] =>
  repoFiles(dirs).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/['"`]([a-z_]+\.[a-z_.]+)['"`]/g)].map((m) => m[1]).filter((n) => NAME.test(n)));

/** The names in backticks in the first cell of each Span, Attribute or Event table. */
function documentedNames(md: string): string[] {
  return tablesIn(md).filter((t) => ['Span', 'Attribute', 'Event'].includes(t.header[0]))
    .flatMap((t) => t.rows.flatMap((r) => [...(r[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1])))
    .filter((n) => NAME.test(n));
}

const missing = (a: readonly string[], b: readonly string[]): string[] => [...new Set(a)].filter((x) => !b.includes(x)).sort();

describe('docs/tracing.md', () => {
  const written = namesInSource(['src/tracing']);
  const documented = documentedNames(readRepoFile('docs/tracing.md')!);

  it('finds the names in the source', () => {
    expect(new Set(written).size).toBeGreaterThan(40);
  });

  it('has a row for every attribute, span and event the code writes', () => {
    expect(missing(written, documented)).toEqual([]);
  });

  it('has no row for one the code does not write', () => {
    expect(missing(documented, written)).toEqual([]);
  });
});

describe('the traces check itself', () => {
  it('reads the first cells of Span, Attribute and Event tables only, several names to a cell', () => {
    const md = '| Attribute | Meaning |\n|---|---|\n| `server.address`, `server.port` | x |\n\n| Event | On |\n|---|---|\n| `sluice.retry` | y |\n\n| Metric | Type |\n|---|---|\n| `sluice.not_this` | z |\n';
    expect(documentedNames(md)).toEqual(['server.address', 'server.port', 'sluice.retry']);
  });
});
