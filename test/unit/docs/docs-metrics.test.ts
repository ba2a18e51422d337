// The metrics page has a row for every sluice_* metric the code registers
// (src/ and plugins/), and no row for one it no longer does.
import { readFileSync } from 'node:fs';
import { repoFiles } from '../../support/log-calls';
import { codeOf, readRepoFile, tablesIn } from '../../support/markdown';

/** Every quoted sluice_* name in the source: the metrics' names as registered. */
const metricNames = (dirs: readonly string[]): string[] =>
  repoFiles(dirs).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/['"`](sluice_[a-z0-9_]+)['"`]/g)].map((m) => m[1]));

/** The metric names of a page's tables whose first column is "Metric". */
function documentedMetrics(md: string): string[] {
  return tablesIn(md).filter((t) => t.header[0] === 'Metric').flatMap((t) => t.rows.map((r) => codeOf(r[0] ?? '') ?? r[0]));
}

const diff = (a: readonly string[], b: readonly string[]): string[] => [...new Set(a)].filter((x) => !b.includes(x)).sort();

describe('docs/metrics.md', () => {
  const registered = metricNames(['src', 'plugins']);
  const documented = documentedMetrics(readRepoFile('docs/metrics.md')!);

  it('finds the metrics in the source', () => {
    expect(new Set(registered).size).toBeGreaterThan(20);
  });

  it('has a row for every metric the code registers', () => {
    expect(diff(registered, documented)).toEqual([]);
  });

  it('has no row for a metric the code does not register (prom-client\'s own aside)', () => {
    expect(diff(documented.filter((m) => m.startsWith('sluice_')), registered)).toEqual([]);
  });

  it('has one row per metric', () => {
    expect(documented.filter((m, i) => documented.indexOf(m) !== i)).toEqual([]);
  });
});

describe('the metrics check itself', () => {
  it('reads the names of every "Metric" table, and only those', () => {
    const md = '## A\n\n| Metric | Type |\n|---|---|\n| `sluice_a_total` | counter |\n\n### B\n\n| Metric | Type |\n|---|---|\n| `sluice_b` | gauge |\n\n| Reason | Status |\n|---|---|\n| `x` | 400 |\n';
    expect(documentedMetrics(md)).toEqual(['sluice_a_total', 'sluice_b']);
    expect(diff(['sluice_a_total', 'sluice_c'], documentedMetrics(md))).toEqual(['sluice_c']);
  });
});
