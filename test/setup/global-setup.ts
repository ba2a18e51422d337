// Jest's global setup: the programs the suite needs (installed when they can
// be), and a throwaway Redis of the suite's own on a free port, so `npm test`
// needs nothing running beforehand. Its address reaches every test as
// REDIS_URL; global-teardown.ts stops it. An operator who wants the suite on
// another server sets SLUICE_TEST_REDIS_URL.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTools } from './tools';
import { freePort, ping } from '../support/net';
import { STATE_FILE } from './state';

async function startRedis(): Promise<{ url: string; pid: number; dir: string }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-suite-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore', detached: true });
  child.unref();
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`redis-server exited with ${code} on port ${port}`))));
  const deadline = Date.now() + 10_000;
  while (!(await Promise.race([ping(port), exited]))) {
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within 10 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, pid: child.pid!, dir };
}

export default async function globalSetup(): Promise<void> {
  ensureTools();
  const given = process.env.SLUICE_TEST_REDIS_URL;
  if (given) {
    process.env.REDIS_URL = given;
    return;
  }
  const redis = await startRedis();
  process.env.REDIS_URL = redis.url;
  writeFileSync(STATE_FILE, JSON.stringify(redis));
}
