// Runs the built gateway (dist/src/server.js) as a real process, for tests of
// signals: reload on SIGHUP, drain on SIGTERM. `npm test` builds first.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
export const SERVER_JS = join(root, 'dist', 'src', 'server.js');
export const CLI_JS = join(root, 'dist', 'src', 'cli', 'main.js');

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface GatewayProcess {
  child: ChildProcess;
  url: string;
  file: string;
  /** Every JSON log line so far. */
  logs: Array<Record<string, unknown>>;
  stderr: string;
  exited: Promise<number | null>;
  writeConfig(yaml: string): void;
  /** Resolves when a log line with this msg appears (after `from` lines). */
  waitForLog(msg: string, from?: number, timeoutMs?: number): Promise<Record<string, unknown>>;
  kill(): void;
}

export async function spawnGateway(configYaml: string, port?: number): Promise<GatewayProcess> {
  if (!existsSync(SERVER_JS)) throw new Error(`${SERVER_JS} is missing: run "npm run build" (npm test does it first)`);
  const listen = port ?? await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-proc-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, configYaml);
  const child = spawn(process.execPath, [SERVER_JS], {
    env: { ...process.env, GATEWAY_CONFIG: file, PORT: String(listen), LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let i: number;
    while ((i = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      try { logs.push(JSON.parse(line)); } catch { /* not a log line */ }
    }
    waiters.splice(0).forEach((w) => w());
  });
  const proc: GatewayProcess = {
    child,
    url: `http://127.0.0.1:${listen}`,
    file,
    logs,
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    writeConfig: (yaml) => writeFileSync(file, yaml),
    waitForLog(msg, from = 0, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no log "${msg}" within ${timeoutMs} ms; stderr: ${proc.stderr}`)), timeoutMs);
        const check = () => {
          const hit = logs.slice(from).find((l) => l.msg === msg);
          if (hit) { clearTimeout(timer); resolve(hit); } else waiters.push(check);
        };
        check();
      });
    },
    kill: () => { if (child.exitCode === null) child.kill('SIGKILL'); },
  };
  child.stderr!.setEncoding('utf8').on('data', (c: string) => { proc.stderr += c; });
  await Promise.race([
    proc.waitForLog('listening', 0, 15_000),
    proc.exited.then((code) => { throw new Error(`gateway exited with ${code}: ${proc.stderr}`); }),
  ]);
  return proc;
}
