// The docs name real files: every repository path in a code span of the
// README or docs/*.md (`src/fleet/retry-decision.ts`, `plugins/<name>/`)
// exists, so a file that moves cannot leave a page pointing at its old place.
// A `<placeholder>` or `*` in a path stands for any name: one must match.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { codePathsOf, readRepoFile } from '../../support/markdown';
import { ROOT } from '../../support/process';

const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`).sort()];

// What a run writes (ignored by git): named in the docs, absent from a fresh clone.
const WRITTEN = ['bench/results/'];

const isDir = (path: string): boolean => existsSync(path) && statSync(path).isDirectory();

/** A segment with `<name>` or `*` as a matcher of names; null for a plain name. */
const pattern = (segment: string): RegExp | null => /[<*]/.test(segment)
  ? new RegExp(`^${segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/<[^>]*>/g, '.+').replace(/\*/g, '.*')}$`)
  : null;

/** Whether a path exists under `dir`; a trailing slash asks for a directory. */
function exists(dir: string, path: string): boolean {
  const [head, ...rest] = path.split('/');
  if (head === '') return isDir(dir);
  const matcher = pattern(head);
  const names = matcher === null ? [head] : isDir(dir) ? readdirSync(dir).filter((n) => matcher.test(n)) : [];
  return names.some((n) => rest.length === 0 ? existsSync(join(dir, n)) : exists(join(dir, n), rest.join('/')));
}

const missing = (pages: Record<string, string>, root: string): string[] =>
  Object.entries(pages).flatMap(([page, md]) => codePathsOf(md).filter(({ path }) => !WRITTEN.some((w) => path.startsWith(w)) && !exists(root, path)).map(({ path, line }) => `${page}:${line}: ${path}`));

describe('the paths the docs name', () => {
  it('finds paths to check on the pages that describe the code', () => {
    expect(codePathsOf(readRepoFile('docs/architecture.md') as string).length).toBeGreaterThan(50);
  });

  it('every one exists', () => {
    expect(missing(Object.fromEntries(PAGES.map((p) => [p, readRepoFile(p) as string])), ROOT)).toEqual([]);
  });
});

describe('the path check itself', () => {
  const page = [
    'Step 4 (`src/api/chat-params.ts`, now `src/request/chat-params.ts`); `src/proxy/endpoint-attempts.ts:130`,',
    'the folder `src/output-rules/`, a plugin in `plugins/<name>/`, the tests `test/e2e/clients/responses-*.test.ts`',
    'and `plugins/<name>/nowhere.ts`.',
    '```',
    'src/api/in-a-fence.ts',
    '```',
  ].join('\n');

  it('reads the paths of code spans only, with their lines, and drops a line number', () => {
    expect(codePathsOf(page)).toEqual([
      { path: 'src/api/chat-params.ts', line: 1 },
      { path: 'src/request/chat-params.ts', line: 1 },
      { path: 'src/proxy/endpoint-attempts.ts', line: 1 },
      { path: 'src/output-rules/', line: 2 },
      { path: 'plugins/<name>/', line: 2 },
      { path: 'test/e2e/clients/responses-*.test.ts', line: 2 },
      { path: 'plugins/<name>/nowhere.ts', line: 3 },
    ]);
  });

  it('names a moved file and a placeholder that matches nothing, and nothing else', () => {
    expect(missing({ 'docs/x.md': page }, ROOT)).toEqual(['docs/x.md:1: src/api/chat-params.ts', 'docs/x.md:3: plugins/<name>/nowhere.ts']);
  });
});
