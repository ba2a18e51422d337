// The errors page lists exactly the catalogue's reasons, each with its
// status, in both directions (as Fastify checks docs/Reference/Errors.md
// against lib/errors.js): a new reason without a row fails, and so does a
// row for a reason the catalogue no longer has.
import { catalogueReasons } from '../../../src/contract/errors';
import { PluginRegistry } from '../../../src/pipeline/registry';
import { builtinPlugins } from '../../../plugins';
import { codeOf, readRepoFile, tableUnder, type Table } from '../../support/markdown';

/** Problems between a table of reasons (reason, status, meaning) and a catalogue. */
function reasonProblems(table: Table, catalogue: Readonly<Record<string, number>>): string[] {
  const problems: string[] = [];
  const documented = new Map<string, string[]>();
  for (const row of table.rows) {
    const reason = codeOf(row[0] ?? '');
    if (reason === undefined) problems.push(`a row whose first cell is not a reason in backticks: ${row.join(' | ')}`);
    else if (documented.has(reason)) problems.push(`${reason}: two rows`);
    else documented.set(reason, row);
  }
  for (const [reason, status] of Object.entries(catalogue)) {
    const row = documented.get(reason);
    if (row === undefined) problems.push(`${reason}: in the catalogue, not on the page`);
    else if (Number(/\d{3}/.exec(row[1] ?? '')?.[0]) !== status) problems.push(`${reason}: status ${status} in the catalogue, "${row[1]}" on the page`);
    else if ((row[2] ?? '').length < 10) problems.push(`${reason}: no meaning given`);
  }
  for (const reason of documented.keys()) if (!(reason in catalogue)) problems.push(`${reason}: on the page, not in the catalogue`);
  return problems;
}

describe('docs/errors.md', () => {
  const table = tableUnder(readRepoFile('docs/errors.md')!, 'Reasons');

  it('has the columns reason, status, meaning', () => {
    expect(table.header).toEqual(['Reason', 'Status', 'When']);
  });

  it('lists every reason of the catalogue with its status, and no other', () => {
    // The catalogue as a gateway has it: the core's reasons and those the built-in plugins declare.
    new PluginRegistry(builtinPlugins);
    const catalogue = Object.fromEntries(catalogueReasons().map((r) => [r.reason, r.status]));
    expect(reasonProblems(table, catalogue)).toEqual([]);
  });
});

describe('the errors check itself', () => {
  const table: Table = {
    header: ['Reason', 'Status', 'When'],
    rows: [['`invalid_json`', '400', 'the body is not JSON'], ['`gone_reason`', '410', 'a reason the code dropped'], ['`rate_limited`', '503', 'a budget is spent']],
  };

  it('finds a missing reason, a stale one and a wrong status', () => {
    expect(reasonProblems(table, { invalid_json: 400, rate_limited: 429, unauthorized: 401 })).toEqual([
      'rate_limited: status 429 in the catalogue, "503" on the page',
      'unauthorized: in the catalogue, not on the page',
      'gone_reason: on the page, not in the catalogue',
    ]);
  });
});
