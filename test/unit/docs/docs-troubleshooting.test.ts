// The troubleshooting page has a row for every line the gateway can log at
// warn, error or fatal (found in the source's syntax tree: src/ and plugins/),
// with its level, and no row for a line the source no longer logs; its other
// tables (lines below warn, the stderr lines of a failed start) name only
// lines the source still writes.
import { readFileSync } from 'node:fs';
import { gatewayLogLines, isWarnOrAbove, logLinesOf, repoFiles, type LogLine } from '../../support/log-calls';
import { codeOf, readRepoFile, tableUnder, type Table } from '../../support/markdown';

/** Problems between a table keyed on messages (message, level, …) and the lines the source logs. */
function rowProblems(table: Table, logged: readonly LogLine[], wanted: (line: LogLine) => boolean): string[] {
  const problems: string[] = [];
  const rows = new Map<string, string>();
  for (const row of table.rows) {
    const message = codeOf(row[0] ?? '');
    if (message === undefined) problems.push(`a row whose first cell is not a message in backticks: ${row[0]}`);
    else rows.set(message, row[1] ?? '');
  }
  for (const [message, level] of rows) {
    const same = logged.filter((l) => l.message === message);
    if (same.length === 0) problems.push(`"${message}": a row, but the source logs no such line`);
    else if (!same.some((l) => l.level === level)) problems.push(`"${message}": logged at ${same[0].level}, the row says ${level}`);
  }
  for (const line of logged.filter(wanted)) {
    if (!rows.has(line.message)) problems.push(`${line.file}:${line.line}: "${line.message}" (${line.level}) has no row`);
  }
  return problems;
}

const page = readRepoFile('docs/troubleshooting.md')!;
const { lines, unread } = gatewayLogLines();

describe('docs/troubleshooting.md', () => {
  it('finds the log lines in the source', () => {
    expect(lines.filter((l) => isWarnOrAbove(l.level)).length).toBeGreaterThan(10);
  });

  it('can read the message of every log call at warn or above (a literal, or a [level, message] pair)', () => {
    expect(unread.filter((u) => isWarnOrAbove(u.level)).map((u) => `${u.file}:${u.line}: ${u.text}`)).toEqual([]);
  });

  it('has a row, with its level, for every line logged at warn or above, and none for a line not logged', () => {
    const table = tableUnder(page, 'Log lines at warn and above');
    expect(rowProblems(table, lines.filter((l) => isWarnOrAbove(l.level)), () => true)).toEqual([]);
  });

  it('names only lines the source logs, at their level, among the lines below warn', () => {
    const table = tableUnder(page, 'Other lines worth knowing');
    expect(rowProblems(table, lines.filter((l) => !isWarnOrAbove(l.level)), () => false)).toEqual([]);
  });

  it('names only stderr lines whose text the source still writes', () => {
    const source = repoFiles(['src', 'plugins', 'bin'], /\.(ts|js)$/).map((f) => readFileSync(f, 'utf8')).join('\n');
    const missing = tableUnder(page, 'Start-up failures (stderr)').rows.flatMap((row) => {
      const line = codeOf(row[0] ?? '')?.replace(/^sluice: /, '') ?? '';
      // The literal parts between placeholders (<file>, <why>) must each be in the source.
      const parts = line.split(/<[^>]+>/).map((p) => p.trim()).filter((p) => p.length >= 4);
      return parts.length === 0 ? [`${row[0]}: nothing to look for`] : parts.filter((p) => !source.includes(p)).map((p) => `${row[0]}: "${p}" is written nowhere`);
    });
    expect(missing).toEqual([]);
  });
});

describe('the log-line scan itself', () => {
  const code = [
    "logger.warn({ open: 1 }, 'drain deadline reached');",
    'this.logger.error(',
    '  { err },',
    "  up ? 'redis lost' : 'redis unreachable',",
    ');',
    "const M = { down: ['error', 'store down'], up: ['info', 'store up'] };",
    '// logger.warn("a comment, not a call")',
    "logger.fatal({ err }, `cannot ${what}`);",
    "console.error('not the gateway log');",
  ].join('\n');
  const found = logLinesOf('x.ts', code);

  it('reads calls over several lines, ternaries and [level, message] pairs, and skips comments', () => {
    expect(found.lines.map((l) => [l.line, l.level, l.message])).toEqual([
      [1, 'warn', 'drain deadline reached'],
      [2, 'error', 'redis lost'],
      [2, 'error', 'redis unreachable'],
      [6, 'error', 'store down'],
      [6, 'info', 'store up'],
    ]);
    expect(found.unread.map((u) => [u.line, u.level])).toEqual([[8, 'fatal']]);
  });

  it('finds a line without a row, a stale row and a wrong level', () => {
    const table: Table = { header: ['Message', 'Level'], rows: [['`drain deadline reached`', 'error'], ['`gone`', 'warn']] };
    expect(rowProblems(table, found.lines.filter((l) => isWarnOrAbove(l.level)), () => true)).toEqual([
      '"drain deadline reached": logged at warn, the row says error',
      '"gone": a row, but the source logs no such line',
      'x.ts:2: "redis lost" (error) has no row',
      'x.ts:2: "redis unreachable" (error) has no row',
      'x.ts:6: "store down" (error) has no row',
    ]);
  });
});
