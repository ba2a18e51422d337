// The docs hang together: every relative link in the README and docs/*.md
// reaches a file, every #anchor a heading of its page (GitHub's slugs), and
// every page of docs/ is linked from the README, the front door.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { anchorsOf, linkedPages, linkProblems, readRepoFile, slug, type ReadFile } from '../../support/markdown';
import { ROOT } from '../../support/process';

const DOCS = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`).sort();
const PAGES = ['README.md', ...DOCS];

describe('the docs\' links', () => {
  it('has pages to check', () => {
    expect(DOCS.length).toBeGreaterThan(0);
  });

  it('every relative link reaches a file, and every anchor a heading of it', () => {
    expect(linkProblems(PAGES, readRepoFile)).toEqual([]);
  });

  it('every page of docs/ is linked from the README', () => {
    const linked = linkedPages('README.md', readRepoFile('README.md')!);
    expect(DOCS.filter((page) => !linked.has(page))).toEqual([]);
  });

  it('every docs page links back to the README', () => {
    expect(DOCS.filter((page) => !linkedPages(page, readRepoFile(page)!).has('README.md'))).toEqual([]);
  });
});

describe('the link check itself', () => {
  const pages: Record<string, string> = {
    'README.md': '# Sluice\n\n[ops](docs/ops.md#drain-on-shutdown) [gone](docs/gone.md) [bad](docs/ops.md#no-such-heading)\n',
    'docs/ops.md': '# Operations\n\n## Drain on shutdown\n\n[back](../README.md) [up](#operations) [out](../../etc/passwd)\n\n```md\n[in code](nowhere.md)\n```\n',
  };
  const read: ReadFile = (path) => pages[path];

  it('finds a missing file, a missing anchor and a link out of the repository, and nothing in code', () => {
    const problems = linkProblems(Object.keys(pages), read);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^README\.md:3: \(docs\/gone\.md\) no such file/);
    expect(problems[1]).toMatch(/^README\.md:3: \(docs\/ops\.md#no-such-heading\) no heading/);
    expect(problems[2]).toMatch(/^docs\/ops\.md:5: .*leaves the repository/);
  });

  it('makes anchors as GitHub does', () => {
    expect(slug('Routing on what the model servers report (`picker: scored`)')).toBe('routing-on-what-the-model-servers-report-picker-scored');
    expect(slug('Decisions where the interface says "not shown"')).toBe('decisions-where-the-interface-says-not-shown');
    expect(slug('Start-up failures (stderr)')).toBe('start-up-failures-stderr');
    expect(slug('server.* settings and `x_y`')).toBe('server-settings-and-x_y');
    expect([...anchorsOf('# A\n## Notes\n### Notes\n```\n# not a heading\n```\n')]).toEqual(['a', 'notes', 'notes-1']);
  });
});
