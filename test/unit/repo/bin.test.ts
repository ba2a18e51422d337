// bin/sluice.js decides when dist/ needs a build: when it is missing or older
// than any source file tsconfig.build.json includes (its build and its runs
// are in test/e2e/fresh-clone.test.ts). Checked here on a small tree.
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { staleReason } = require('../../../bin/sluice.js') as { staleReason(root: string): string | undefined };

describe('bin/sluice.js: is dist/ fresh?', () => {
  let root: string;
  const at = (path: string, seconds: number) => {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, path.endsWith('.json') ? JSON.stringify({ include: ['src', 'plugins'] }) : '');
    utimesSync(file, seconds, seconds);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sluice-bin-'));
    at('tsconfig.build.json', 1000);
    at('tsconfig.json', 1000);
    at('src/cli/main.ts', 1000);
    at('src/deep/er/thing.ts', 1000);
    at('plugins/p/index.ts', 1000);
    at('plugins/p/types.d.ts', 5000); // declarations emit nothing
  });

  const built = (seconds: number) => {
    for (const out of ['dist/src/cli/main.js', 'dist/src/deep/er/thing.js', 'dist/plugins/p/index.js']) at(out, seconds);
  };

  it('needs a build when dist/ is missing', () => {
    expect(staleReason(root)).toMatch(/dist\/src\/cli\/main\.js is missing/);
  });

  it('is fresh when every output is at least as new as its source', () => {
    built(2000);
    expect(staleReason(root)).toBeUndefined();
  });

  it('needs a build when a source is newer than its output, naming it', () => {
    built(2000);
    at('src/deep/er/thing.ts', 3000);
    expect(staleReason(root)).toBe('src/deep/er/thing.ts is newer than dist/');
  });

  it('needs a build for a new source file without output, or a changed build config', () => {
    built(2000);
    at('plugins/q/index.ts', 1500);
    expect(staleReason(root)).toBe('plugins/q/index.ts is newer than dist/');
    at('plugins/q/index.ts', 1500);
    at('dist/plugins/q/index.js', 2000);
    at('tsconfig.build.json', 3000);
    expect(staleReason(root)).toBe('tsconfig.build.json changed');
  });

  it('is fresh with dist/ alone and no sources beside it (the image)', () => {
    const image = mkdtempSync(join(tmpdir(), 'sluice-image-'));
    mkdirSync(join(image, 'dist/src/cli'), { recursive: true });
    writeFileSync(join(image, 'dist/src/cli/main.js'), '');
    expect(staleReason(image)).toBeUndefined();
  });
});
