// Scraping and reading the Prometheus text exposition in tests, and checking
// it with promtool (Debian package `prometheus`).
import { spawnSync } from 'node:child_process';
import { call } from './http';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export async function scrape(metricsUrl: string, token?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return call('GET', `${metricsUrl}/metrics`, undefined, token === undefined ? {} : { authorization: `Bearer ${token}` });
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/g;

export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (m === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** Every sample named `name` as { "label=value,...": value }, label names sorted. */
export function series(samples: Sample[], name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) {
    if (s.name !== name) continue;
    const key = Object.keys(s.labels).sort().map((k) => `${k}=${s.labels[k]}`).join(',');
    out[key] = s.value;
  }
  return out;
}

/** The entries of a series() result that have counted something (refusal and failure series start at 0). */
export const counted = (entries: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== 0));

/** Runs promtool; fails with install advice if it is missing. */
export function promtool(args: string[], input?: string): { status: number; output: string } {
  const run = spawnSync('promtool', args, { input, encoding: 'utf8', timeout: 15_000 });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw new Error('promtool is not installed. Install it with `apt-get install prometheus` (Debian/Ubuntu; `bash .ci/run` does this), or put a Prometheus release\'s promtool on the PATH.');
  }
  if (run.error) throw run.error;
  return { status: run.status ?? -1, output: `${run.stdout}${run.stderr}` };
}

/** `promtool check metrics` on an exposition: status 0 and no output when it passes. */
export const promtoolCheck = (exposition: string) => promtool(['check', 'metrics'], exposition);
