// Real Redis for tests: the suite's own server (REDIS_URL, set by test/setup/global-setup.ts)
// with a random key prefix per test, and throwaway redis-server processes
// (single or a three-master cluster) that a test may stop and restart.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { freePort, ping } from './net';
import { until } from './wait';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';

export function sharedRedisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: run the suite with npm test (its global setup starts a Redis of its own).');
  return url;
}

/** A prefix no other test run uses, so runs never see each other's counts. */
export const uniquePrefix = (): string => `sluice-test:${randomBytes(6).toString('hex')}:`;

const INSTALL = 'Install it with: apt-get install redis-server redis-tools';

/** Fails the test (never skips it) when redis-server / redis-cli are missing. */
export function requireRedisBinaries(): void {
  for (const bin of ['redis-server', 'redis-cli']) {
    const found = spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
    if (!found) throw new Error(`${bin} is not on PATH. ${INSTALL}`);
  }
}

export { freePort };

/** Deletes every key under `prefix` (SCAN, not KEYS). */
export async function deletePrefix(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}



export interface RedisProcess {
  port: number;
  url: string;
  /** Kills the server (SIGKILL, like a crash) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** SIGSTOP: the server hangs with its connections open; `resume()` undoes it. */
  pause(): void;
  resume(): void;
}

/** Every process and temp dir a test file made; `cleanupRedis()` in afterAll removes them. */
const children = new Set<ChildProcess>();
const dirs = new Set<string>();
// Should the test process die before afterAll, take the servers with it.
process.once('exit', () => { for (const child of children) child.kill('SIGKILL'); });

function launch(port: number, dir: string, extra: string[]): ChildProcess {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], { stdio: 'ignore' });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function kill(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export async function startRedisServer(port?: number, extra: string[] = []): Promise<RedisProcess> {
  requireRedisBinaries();
  const chosen = port ?? await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-redis-'));
  dirs.add(dir);
  let child: ChildProcess | undefined;
  const proc: RedisProcess = {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    async start() {
      child = launch(chosen, dir, extra);
      await until(() => ping(chosen), `redis-server on port ${chosen}`);
    },
    stop: () => kill(child),
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
  await proc.start();
  return proc;
}

export interface RedisCluster {
  nodes: string[];
  servers: RedisProcess[];
}

/** Three masters, no replicas, slots spread by `redis-cli --cluster create`. */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  requireRedisBinaries();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cluster-'));
  dirs.add(dir);
  const servers: RedisProcess[] = [];
  for (let i = 0; i < masters; i++) {
    // The bus port named too: left to itself it is the port + 10000, inside the kernel's ephemeral
    // range, where any outgoing connection may hold it when a stopped node starts again.
    const bus = await freePort();
    servers.push(await startRedisServer(undefined, ['--cluster-enabled', 'yes', '--cluster-port', String(bus), '--cluster-config-file', join(dir, `nodes-${i}.conf`), '--cluster-node-timeout', '2000']));
  }
  const nodes = servers.map((s) => `127.0.0.1:${s.port}`);
  const created = spawnSync('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], { encoding: 'utf8', timeout: 30_000 });
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}\n${created.stderr}`);
  await until(async () => servers.every((s) => spawnSync('redis-cli', ['-p', String(s.port), 'cluster', 'info'], { encoding: 'utf8' }).stdout.includes('cluster_state:ok')), 'cluster_state:ok');
  return { nodes, servers };
}

export async function cleanupRedis(): Promise<void> {
  await Promise.all([...children].map((c) => kill(c)));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}
