// Runs the built gateway as a real process, as the image does
// (node --max-semi-space-size=32 dist/src/cli/main.js serve), for tests of
// signals, start-up errors and the CLI. `npm test` builds first.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { freePort } from './net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');
export const CLI_JS = join(ROOT, 'dist', 'src', 'cli', 'main.js');
/** The Node flag production runs with (docs/operations.md). */
export const NODE_FLAGS = ['--max-semi-space-size=32'];

export { freePort };

export interface ProcessLogs {
  /** Every JSON log line so far. */
  logs: Array<Record<string, unknown>>;
  /** Lines of stdout that were not JSON (two processes' lines run together, say). */
  garbled: string[];
  /** Everything written to stderr so far. */
  readonly stderr: string;
  /** Resolves with the exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Resolves when a log line with this msg appears (after `from` lines). */
  waitForLog(msg: string, from?: number, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves when `count` log lines with this msg have appeared (after `from` lines). */
  waitForLogs(msg: string, count: number, from?: number, timeoutMs?: number): Promise<Array<Record<string, unknown>>>;
}

/** Reads a child's stdout as JSON log lines and keeps its stderr. */
export function watchProcess(child: ChildProcess): ProcessLogs {
  const logs: Array<Record<string, unknown>> = [];
  const garbled: string[] = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let i: number;
    while ((i = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      try { logs.push(JSON.parse(line)); } catch { garbled.push(line); }
    }
    waiters.splice(0).forEach((w) => w());
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
  const waitForLogs = (msg: string, count: number, from = 0, timeoutMs = 10_000): Promise<Array<Record<string, unknown>>> => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${count} log(s) "${msg}" within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
    timer.unref(); // a wait the process's exit made moot keeps no test run alive
    const check = () => {
      const hits = logs.slice(from).filter((l) => l.msg === msg);
      if (hits.length >= count) { clearTimeout(timer); resolve(hits.slice(0, count)); } else waiters.push(check);
    };
    check();
  });
  return {
    logs,
    garbled,
    get stderr() { return stderr; },
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    waitForLog: (msg, from = 0, timeoutMs = 10_000) => waitForLogs(msg, 1, from, timeoutMs).then((hits) => hits[0]),
    waitForLogs,
  };
}

/** The processes `pid` started (Linux: /proc), e.g. a primary's workers. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export interface GatewayProcess extends ProcessLogs {
  child: ChildProcess;
  url: string;
  file: string;
  /** The pid the "listening" line reports: the process to signal. */
  pid: number;
  writeConfig(yaml: string): void;
  kill(): void;
}

export async function spawnGateway(configYaml: string, port?: number, env: NodeJS.ProcessEnv = {}): Promise<GatewayProcess> {
  if (!existsSync(CLI_JS)) throw new Error(`${CLI_JS} is missing: run "npm run build" (npm test does it first)`);
  const listen = port ?? await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-proc-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, configYaml);
  const child = spawn(process.execPath, [...NODE_FLAGS, CLI_JS, 'serve'], {
    env: { ...process.env, GATEWAY_CONFIG: file, PORT: String(listen), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const watched = watchProcess(child);
  const listening = await Promise.race([
    watched.waitForLog('listening', 0, 15_000),
    watched.exited.then((code): never => { throw new Error(`gateway exited with ${code}: ${watched.stderr}`); }),
  ]);
  return Object.assign(watched, {
    child,
    url: `http://127.0.0.1:${listen}`,
    file,
    pid: listening.pid as number,
    writeConfig: (yaml: string) => writeFileSync(file, yaml),
    // Workers (server.workers) first: a worker whose primary is gone drains before it exits.
    kill: () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      for (const pid of childPids(child.pid!)) process.kill(pid, 'SIGKILL');
      child.kill('SIGKILL');
    },
  });
}

/**
 * Which of these processes holds the server's end of a TCP connection on
 * loopback (Linux: /proc): the socket with local port `serverPort` and remote
 * port `clientPort`. With server.workers, the worker a connection was handed to.
 */
export function holderOfConnection(pids: number[], serverPort: number, clientPort: number): number | undefined {
  const hex = (n: number) => `:${n.toString(16).toUpperCase().padStart(4, '0')}`;
  const row = readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).map((l) => l.trim().split(/\s+/))
    .find((f) => f[1]?.endsWith(hex(serverPort)) && f[2]?.endsWith(hex(clientPort)) && f[9] !== '0');
  if (row === undefined) return undefined;
  const socket = `socket:[${row[9]}]`;
  const holds = (pid: number, fd: string): boolean => {
    try { return readlinkSync(`/proc/${pid}/fd/${fd}`) === socket; } catch { return false; }
  };
  return pids.find((pid) => {
    try { return readdirSync(`/proc/${pid}/fd`).some((fd) => holds(pid, fd)); } catch { return false; }
  });
}

export interface CliRun { status: number | null; stdout: string; stderr: string }

/** The CLI as a child process, run asynchronously (the gateway it calls may run in this process); the admin URL and key only from `env`. */
export function sluice(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_JS, ...args], { env: { ...process.env, SLUICE_ADMIN_URL: '', SLUICE_ADMIN_KEY: '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
    child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}
