// The official MCP conformance suite (@modelcontextprotocol/conformance) in
// server mode, run as its CLI in a child process against a server's URL:
// every server scenario it has (`--suite all`), each scenario's checks read
// back from the result files it writes. On Node 20 the CLI runs with
// fs-glob-hook.mjs (it needs fs.globSync, which Node 22 added); on later
// Nodes the hook does nothing.
//   const run = await runConformance('http://127.0.0.1:3001/mcp');   // run.scenarios.get('ping') → its checks
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './process';

const CLI = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const HOOK = join(__dirname, 'fs-glob-hook.mjs');

export interface ConformanceCheck {
  id: string;
  /** SUCCESS, FAILURE, WARNING, INFO or SKIPPED. */
  status: string;
  errorMessage?: string;
}

export interface ConformanceRun {
  /** Each scenario the CLI wrote results for, with its checks. */
  scenarios: Map<string, ConformanceCheck[]>;
  output: string;
}

function cli(args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--no-warnings', '--import', HOOK, CLI, ...args], { cwd: tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString('utf8'); });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`conformance ${args[0]} ran past ${timeoutMs} ms: ${output.slice(-2000)}`)); }, timeoutMs);
    child.once('error', (err) => { clearTimeout(timer); reject(err); });
    child.once('close', (code) => { clearTimeout(timer); resolve({ code, output }); });
  });
}

/** Every server scenario the CLI offers (`list --server`). */
export async function serverScenarios(): Promise<string[]> {
  const { code, output } = await cli(['list', '--server'], 30_000);
  const names = [...output.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
  if (code !== 0 || names.length === 0) throw new Error(`conformance list failed (${code}): ${output}`);
  return names;
}

/** Runs every server scenario against `url`; exits 1 when any check fails, which is the result, not an error. */
export async function runConformance(url: string, timeoutMs = 45_000): Promise<ConformanceRun> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-conformance-'));
  try {
    const { code, output } = await cli(['server', '--url', url, '--suite', 'all', '-o', dir], timeoutMs);
    if (code !== 0 && code !== 1) throw new Error(`conformance server exited with ${code}: ${output.slice(-2000)}`);
    const scenarios = new Map<string, ConformanceCheck[]>();
    // One folder per scenario: server-<scenario>-<ISO time with dashes>.
    for (const entry of readdirSync(dir)) {
      const name = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(entry)?.[1];
      const file = join(dir, entry, 'checks.json');
      if (name !== undefined && existsSync(file)) scenarios.set(name, JSON.parse(readFileSync(file, 'utf8')) as ConformanceCheck[]);
    }
    return { scenarios, output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A scenario passes when it has checks and none failed. */
export const scenarioPassed = (checks: ConformanceCheck[] | undefined): boolean =>
  checks !== undefined && checks.length > 0 && checks.every((c) => c.status !== 'FAILURE');

/** The checks that passed, as "<scenario>/<check id>". */
export const passedChecks = (run: ConformanceRun): string[] =>
  [...run.scenarios].flatMap(([scenario, checks]) => checks.filter((c) => c.status === 'SUCCESS').map((c) => `${scenario}/${c.id}`));
