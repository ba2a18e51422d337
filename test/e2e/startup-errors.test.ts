// A start that cannot work stops at once with exit 1 and says why on stderr,
// one line an operator can act on (no stack trace): each environment variable,
// each listener whose address is taken (and then nothing says "listening"), a
// missing config file; a broken config lists every problem in one round.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI_JS, NODE_FLAGS, freePort, watchProcess } from '../support/process';

const dir = mkdtempSync(join(tmpdir(), 'sluice-start-'));
let configs = 0;
const configFile = (yaml: string): string => {
  const file = join(dir, `gateway-${++configs}.yaml`);
  writeFileSync(file, yaml);
  return file;
};

/** `sluice serve` as the image runs it, to its exit. */
async function serve(env: NodeJS.ProcessEnv): Promise<{ status: number | null; stderr: string; logs: Array<Record<string, unknown>> }> {
  const child = spawn(process.execPath, [...NODE_FLAGS, CLI_JS, 'serve'], { env: { ...process.env, PORT: '', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const watched = watchProcess(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const status = await watched.exited;
  clearTimeout(timer);
  return { status, stderr: watched.stderr, logs: watched.logs };
}

/** Holds a port the way another process would. */
async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

const minimal = (server: string, extra = '') => `server: ${server}\n${extra}`;

describe('sluice serve: environment variables', () => {
  it('names LOG_LEVEL and its allowed values', async () => {
    const r = await serve({ LOG_LEVEL: 'bogus', GATEWAY_CONFIG: configFile(minimal('{ port: 0, metrics: { port: 0 } }')) });
    expect(r.stderr).toBe('sluice: LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent (got "bogus")\n');
    expect(r.status).toBe(1);
    expect(r.logs).toEqual([]);
  });

  it('blames PORT, not server.port in the file', async () => {
    const r = await serve({ PORT: 'abc', GATEWAY_CONFIG: configFile(minimal('{ port: 8080 }')) });
    expect(r.stderr).toBe('sluice: PORT must be a port number from 0 to 65535 (got "abc")\n');
    expect(r.status).toBe(1);
  });

  it('says GATEWAY_CONFIG names a file that does not exist', async () => {
    const missing = join(dir, 'no-such.yaml');
    const r = await serve({ GATEWAY_CONFIG: missing });
    expect(r.stderr).toBe(`sluice: cannot read the config file ${missing}: it does not exist (GATEWAY_CONFIG=${missing})\n`);
    expect(r.status).toBe(1);
  });
});

describe('sluice serve: a listener whose address is taken', () => {
  let taken: { port: number; server: Server };
  beforeEach(async () => { taken = await occupy(); });
  afterEach(() => new Promise<void>((resolve) => taken.server.close(() => resolve())));

  it('names the public API and its address', async () => {
    const r = await serve({ PORT: String(taken.port), GATEWAY_CONFIG: configFile(minimal('{ metrics: { port: 0 } }')) });
    expect(r.stderr).toBe(`sluice: cannot listen on 127.0.0.1:${taken.port} for the public API (server.host, server.port): address already in use\n`);
    expect(r.status).toBe(1);
    expect(r.logs).toEqual([]);
  });

  it('names the metrics listener, and nothing said "listening" for the public port it had bound', async () => {
    const r = await serve({ PORT: String(await freePort()), GATEWAY_CONFIG: configFile(minimal(`{ metrics: { port: ${taken.port} } }`, 'plugins:\n  - { name: metrics }\n')) });
    expect(r.stderr).toBe(`sluice: cannot listen on 127.0.0.1:${taken.port} for metrics (server.metrics): address already in use\n`);
    expect(r.status).toBe(1);
    expect(r.logs.filter((l) => /listening/.test(String(l.msg)))).toEqual([]);
  });

  it('names the demo backend and its address', async () => {
    const yaml = minimal('{ metrics: { port: 0 } }', `upstreams:\n  demo: { format: demo, url: "http://127.0.0.1:${taken.port}/v1" }\n`);
    const r = await serve({ PORT: String(await freePort()), GATEWAY_CONFIG: configFile(yaml) });
    expect(r.stderr).toBe(`sluice: cannot listen on 127.0.0.1:${taken.port} for the demo backend: address already in use\n`);
    expect(r.status).toBe(1);
    expect(r.logs).toEqual([]);
  });
});

describe('sluice serve: a broken config', () => {
  it('lists schema problems, cross-references and plugin settings in one round', async () => {
    const file = configFile([
      'server: { port: 0, metrics: { port: 0 } }',
      'keys:',
      '  - { id: a, sha256: "nothex", org: ghost }',
      'upstreams:',
      '  vllm: { url: "http://127.0.0.1:8000/v1" }',
      'routes:',
      '  - { model: "img", upstream: vlm }',
      'plugins:',
      '  - { name: limits, nMax: 50 }',
    ].join('\n'));
    const r = await serve({ GATEWAY_CONFIG: file });
    expect(r.status).toBe(1);
    expect(r.stderr.split('\n')).toEqual([
      `sluice: invalid config ${file}:`,
      expect.stringMatching(/^  - keys\[0\]\.sha256: /),
      '  - keys[0].org: unknown org "ghost"',
      '  - routes[0].upstream: unknown upstream "vlm"',
      expect.stringMatching(/^  - plugins\[0\]\.nMax: /),
      '',
    ]);
  });

  it('names every unknown field of a block, one line each', async () => {
    const file = configFile([
      'server: { port: 0, metrics: { port: 0 }, hots: x, prot: 1 }',
      'upstreams:',
      '  u: { url: "http://127.0.0.1:8000/v1", fromat: openai, timeoutMS: 5, maxSocket: 3, heders: {}, retyr: {} }',
    ].join('\n'));
    const r = await serve({ GATEWAY_CONFIG: file });
    expect(r.status).toBe(1);
    expect(r.stderr.split('\n')).toEqual([
      `sluice: invalid config ${file}:`,
      '  - server.hots: unknown field', '  - server.prot: unknown field',
      ...['fromat', 'timeoutMS', 'maxSocket', 'heders', 'retyr'].map((k) => `  - upstreams.u.${k}: unknown field`),
      '',
    ]);
  });
});
