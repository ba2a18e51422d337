// A fresh clone right after `npm ci`: no dist/. `npx sluice` builds on first
// use and keeps working after the build (its npx cache entry stays good);
// `npm start` builds only when dist/ is stale, and the server it runs is npm's
// own child, the pid its "listening" line reports: that pid takes SIGHUP and
// SIGTERM, and nothing is left running after it.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort, ROOT, watchProcess } from '../support/process';

jest.setTimeout(180_000);

const clone = mkdtempSync(join(tmpdir(), 'sluice-clone-'));
const npmCache = mkdtempSync(join(tmpdir(), 'sluice-npm-cache-'));
const cli = join(clone, 'dist', 'src', 'cli', 'main.js');
const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;

/** This process's environment without npm's own variables (a test may run under `npm test`), with a cache of its own. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return { ...env, npm_config_cache: npmCache, npm_config_update_notifier: 'false', npm_config_fund: 'false', ...extra };
}

const npx = (args: string[]) => spawnSync('npx', args, { cwd: clone, env: cleanEnv(), encoding: 'utf8', timeout: 150_000 });

/** The parent pid of a process, from /proc. */
const parentOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);

beforeAll(() => {
  // What a clone holds: the tracked files and the new ones not ignored; node_modules as `npm ci` left it.
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (!existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(clone, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'), 'dir');
});
afterAll(() => {
  rmSync(clone, { recursive: true, force: true });
  rmSync(npmCache, { recursive: true, force: true });
});

describe('a fresh clone', () => {
  it('has no dist/ and a committed plain-JS bin', () => {
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    expect(JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')).bin).toEqual({ sluice: 'bin/sluice.js' });
  });

  it('runs `npx sluice` before any build: it builds, then answers', () => {
    const r = npx(['sluice', '--version']);
    expect(r.stderr).toContain('sluice: building dist/');
    expect(r.stdout).toBe(`${version}\n`);
    expect(r.status).toBe(0);
    expect(existsSync(cli)).toBe(true);
  });

  it('runs `npx sluice` again after the build, without building', () => {
    const built = statSync(cli).mtimeMs;
    const r = npx(['sluice', 'config', 'check', 'config/gateway.yaml']);
    expect(r.stdout).toBe('config/gateway.yaml: ok\n');
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain('building');
    expect(statSync(cli).mtimeMs).toBe(built);
  });

  it('runs `npm start` as npm\'s own child, the pid "listening" reports, which takes SIGHUP and SIGTERM', async () => {
    const built = statSync(cli).mtimeMs;
    const config = join(clone, 'start.yaml');
    const yaml = (drain: number) => `server: { port: 0, drainSeconds: ${drain}, metrics: { port: 0 } }\n`;
    writeFileSync(config, yaml(1));
    const npm = spawn('npm', ['start'], { cwd: clone, env: cleanEnv({ GATEWAY_CONFIG: config, PORT: String(await freePort()), LOG_LEVEL: 'info' }), stdio: ['ignore', 'pipe', 'pipe'] });
    const watched = watchProcess(npm);
    let pid: number | undefined;
    try {
      const listening = await watched.waitForLog('listening', 0, 60_000);
      pid = listening.pid as number;
      expect(pid).not.toBe(npm.pid);
      expect(parentOf(pid)).toBe(npm.pid); // no shell in between
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      expect(cmdline).toEqual(expect.arrayContaining(['--max-semi-space-size=32', 'bin/sluice.js', 'serve']));
      expect(statSync(cli).mtimeMs).toBe(built); // dist/ was fresh: no build

      const mark = watched.logs.length;
      writeFileSync(config, yaml(2));
      process.kill(pid, 'SIGHUP');
      await watched.waitForLog('config reloaded', mark);

      process.kill(pid, 'SIGTERM');
      await watched.waitForLog('stopped', mark);
      expect(await watched.exited).toBe(0);
      expect(existsSync(`/proc/${pid}`)).toBe(false);
      expect(watched.stderr).not.toContain('sluice:'); // no build, no error
    } finally {
      if (pid !== undefined && existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
      if (npm.exitCode === null) npm.kill('SIGKILL');
    }
  });
});
