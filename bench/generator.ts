// The load generator for throughput runs, in a process of its own so its CPU
// is its own: wrk when it is installed (C, a few µs of CPU per request, so the
// gateway gets the cores), autocannon otherwise (bench/load.ts).
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros } from './cpu';

export interface LoadResult {
  rps: number;
  /** CPU microseconds the generator spent. */
  cpuMicros: number;
}

export const generator: 'wrk' | 'autocannon' = spawnSync('wrk', ['--version']).error === undefined ? 'wrk' : 'autocannon';

/** A Lua string literal: for printable ASCII, JSON's quoting (\" and \\) is Lua's too. */
const luaString = (s: string): string => {
  if (/[^\x20-\x7e]/.test(s)) throw new Error('bench: the wrk script takes printable ASCII only');
  return JSON.stringify(s);
};

function wrkScript(headers: Record<string, string>, body: string): string {
  const file = join(tmpdir(), `sluice-bench-${process.pid}.lua`);
  const lines = ['wrk.method = "POST"', `wrk.body = ${luaString(body)}`, ...Object.entries(headers).map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`)];
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Runs the generator: `connections` keep-alive connections for `duration` seconds. Rejects when any answer was not 2xx or failed. */
export function runLoad(url: string, headers: Record<string, string>, body: string, duration: number, connections: number): Promise<LoadResult> {
  const [cmd, args] = generator === 'wrk'
    ? ['wrk', ['-t1', `-c${connections}`, `-d${duration}s`, '--timeout', '10s', '-s', wrkScript(headers, body), url]]
    : [process.execPath, [join(__dirname, 'load.js'), JSON.stringify({ url, method: 'POST', headers, body, connections, duration })]];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    let cpu = 0;
    // The generator's own CPU, read while it runs (its /proc entry goes when it exits).
    const sampler = setInterval(() => { try { cpu = cpuMicros(child.pid!); } catch { /* exiting */ } }, 100);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
    child.once('exit', (code) => {
      clearInterval(sampler);
      if (code !== 0) return reject(new Error(`${generator} exited with ${code}`));
      if (generator === 'autocannon') {
        const r = JSON.parse(out) as { average: number; non2xx: number; errors: number; cpuMicros: number };
        if (r.non2xx > 0 || r.errors > 0) return reject(new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors under load`));
        return resolve({ rps: r.average, cpuMicros: r.cpuMicros });
      }
      const failed = /Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? /Socket errors: .*/.exec(out)?.[0];
      if (failed !== undefined) return reject(new Error(`${url}: ${failed} under load`));
      resolve({ rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]), cpuMicros: cpu });
    });
  });
}
