// .ci/run, checked without running CI inside CI: it repeats the Dockerfile's
// install step on its own, runs the suite a second time on the image's Node
// (.ci/image-node, see compose-file.test.ts), and sums both runs into the one
// closing line (.ci/summarize.js, run here for real).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTools } from '../../setup/tools';

const root = join(__dirname, '..', '..', '..');
const ci = readFileSync(join(root, '.ci', 'run'), 'utf8');
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

describe('.ci/run', () => {
  it('runs the Dockerfile\'s install step alone: the same files in an empty folder, the same npm ci', () => {
    const lines = dockerfile.split('\n');
    const install = lines.findIndex((l) => /^RUN npm ci\b/.test(l));
    const copied = /^COPY\s+(.+)\s+\S+$/.exec(lines[install - 1])![1].trim().split(/\s+/);
    expect(copied.sort()).toEqual(['package-lock.json', 'package.json']);
    const flags = lines[install].replace(/^RUN npm ci/, '').trim().split(/\s+/);

    const cp = /^cp ((?:\S+ )+)"\$(\w+)\/"$/m.exec(ci);
    expect(cp).not.toBeNull();
    expect(cp![1].trim().split(' ').sort()).toEqual(copied.sort());
    const folder = cp![2];
    expect(ci).toContain(`${folder}=$(mktemp -d)`);
    const step = new RegExp(`\\(cd "\\$${folder}" && npm ci ([^)>]*)`).exec(ci);
    expect(step).not.toBeNull();
    expect(step![1].split(/\s+/)).toEqual(expect.arrayContaining([...flags, '--ignore-scripts']));
    expect(ci).toMatch(/\|\| fail "npm ci from package\.json and package-lock\.json alone/);
  });

  it('runs the suite on this machine\'s Node and again on the image\'s, failing when that Node cannot be had', () => {
    expect(ci).toMatch(/^image_node=\$\(bash \.ci\/image-node\) \|\| fail /m);
    const runs = ci.match(/^.*npm test -- --ci --json --outputFile=.*$/gm) ?? [];
    expect(runs).toHaveLength(2);
    expect(runs[1]).toMatch(/^PATH="\$image_path" npm test/);
    expect(ci).toContain('image_path="$(dirname "$image_node"):$PATH"');
    expect(ci).toMatch(/^node \.ci\/summarize\.js "\$results\/host-node\.json" "\$results\/image-node\.json" \|\| exit 1$/m);
  });
});

describe('.ci/summarize.js', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ci-'));
  const results = (name: string, passed: number, failed: number, broken = 0) => {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify({ numPassedTests: passed, numFailedTests: failed, numRuntimeErrorTestSuites: broken }));
    return file;
  };
  const summarize = (...files: string[]) => spawnSync(process.execPath, [join(root, '.ci', 'summarize.js'), ...files], { encoding: 'utf8' });

  it('prints one line summing both runs, and exits 0 when all passed', () => {
    const r = summarize(results('a.json', 900, 0), results('b.json', 899, 0));
    expect(r.stdout).toBe('1799 passed, 0 failed\n');
    expect(r.status).toBe(0);
  });

  it('counts failed tests and suites that could not run, and exits 1', () => {
    const r = summarize(results('c.json', 900, 0), results('d.json', 890, 2, 1));
    expect(r.stdout).toBe('1790 passed, 3 failed\n');
    expect(r.status).toBe(1);
  });

  it('counts a run that wrote no results as a failure, and a run of no test as not passing', () => {
    const missing = summarize(results('e.json', 900, 0), join(dir, 'never-written.json'));
    expect(missing.stdout).toBe('900 passed, 1 failed\n');
    expect(missing.status).toBe(1);
    expect(summarize(results('f.json', 900, 0), results('g.json', 0, 0)).status).toBe(1);
  });
});

describe('the test command needs nothing running beforehand', () => {
  it('runs on a Redis of its own, never the machine\'s 6379', () => {
    const url = new URL(process.env.REDIS_URL!);
    if (process.env.SLUICE_TEST_REDIS_URL) return expect(process.env.REDIS_URL).toBe(process.env.SLUICE_TEST_REDIS_URL);
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.port).not.toBe('6379');
  });

  it('stops at once with the command that installs a missing program when it cannot install it', () => {
    expect(() => ensureTools([{ command: 'sluice-no-such-program', pkg: 'sluice-no-such-package' }], false, () => undefined))
      .toThrow('Install with: sudo apt-get install -y sluice-no-such-package');
    expect(() => ensureTools([{ command: 'node', pkg: 'nodejs' }], false)).not.toThrow();
  });

  it('.ci/run calls the test command with the machine\'s Redis stopped and REDIS_URL unset', () => {
    expect(ci).toMatch(/^unset REDIS_URL SLUICE_TEST_REDIS_URL$/m);
    expect(ci).toMatch(/redis-cli -h 127\.0\.0\.1 -p 6379 shutdown nosave/);
    expect(ci).not.toMatch(/apt-get/);
  });
});
