// The `sluice` command, run as a real process: help and version as every CLI
// gives them, a created key that authenticates once pasted into a config (the
// example of docs/operations.md's Keys section, against the shipped config),
// and `config check` reporting every problem of a broken file, with its path, in one round.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { startBackend, type Backend } from '../support/backends';
import { bearer, post } from '../support/http';
import { CLI_JS, ROOT, spawnGateway } from '../support/process';
import { hashKey } from '../../src/auth/keys';

const sluice = (args: string[], input?: string) => spawnSync(process.execPath, [CLI_JS, ...args], { input, encoding: 'utf8' });
const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));

describe('sluice help and version', () => {
  it.each([['--help'], ['-h'], ['help']])('prints the usage to stdout and exits 0 for %s', (flag) => {
    const r = sluice([flag]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: sluice /);
    expect(r.stdout).toContain('sluice config check');
    expect(r.stderr).toBe('');
  });

  it.each([[['frobnicate']], [['keys', 'destroy']], [[]]])('prints the usage to stderr and exits 2 for %j', (args) => {
    const r = sluice(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^sluice: (unknown command|no command)/);
    expect(r.stderr).toContain('usage: sluice ');
  });

  it('prints the package version for --version and exits 0', () => {
    const r = sluice(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}\n`);
  });
});

describe('sluice keys', () => {
  let backend: Backend;
  beforeAll(async () => { backend = await startBackend({ format: 'openai' }); });
  afterAll(async () => { await backend.close(); });

  it('creates a key whose printed entry, pasted into a config, authenticates', async () => {
    const out = execFileSync(process.execPath, [CLI_JS, 'keys', 'create', '--id', 'ci-bot', '--org', 'acme', '--models', 'ok-*,chat-?'], { encoding: 'utf8' });
    const key = /key \(shown once, store it now\): (\S+)/.exec(out)![1];
    expect(key).toMatch(/^sk-sluice-[A-Za-z0-9_-]{43}$/); // 32 random bytes
    const entry = out.split('\n').find((l) => l.trim().startsWith('- {'))!;
    expect(entry).toContain(`sha256: "${hashKey(key)}"`);
    expect(out).not.toBe(execFileSync(process.execPath, [CLI_JS, 'keys', 'create', '--id', 'ci-bot'], { encoding: 'utf8' }));

    const yaml = `keys:\n${entry}\norgs:\n  acme: {}\nupstreams:\n  b: { url: "${backend.base}", format: openai }\nroutes:\n  - { model: "*", upstream: b }\nserver: { metrics: { port: 0 } }\n`;
    const gw = await spawnGateway(yaml);
    try {
      const body = { model: 'ok-1', messages: [{ role: 'user', content: 'hi' }] };
      expect((await post(`${gw.url}/v1/chat/completions`, body, bearer(key))).status).toBe(200);
      const denied = await post(`${gw.url}/v1/chat/completions`, { ...body, model: 'other' }, bearer(key));
      expect(denied.body.error.reason).toBe('model_not_allowed');
    } finally {
      gw.kill();
    }
  });

  it('runs the keys create example of docs/operations.md verbatim, and its entry works in the shipped config', async () => {
    const page = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    const line = /^npx sluice (keys create [^#\n]*?)\s*(#.*)?$/m.exec(page);
    expect(line).not.toBeNull();
    const args = line![1].match(/'[^']*'|\S+/g)!.map((a) => a.replace(/^'(.*)'$/, '$1'));
    const out = execFileSync(process.execPath, [CLI_JS, ...args], { encoding: 'utf8' });
    const key = /key \(shown once, store it now\): (\S+)/.exec(out)![1];
    const entry = parseYaml(out.split('\n').find((l) => l.trim().startsWith('- {'))!)[0];

    const shipped = parseYaml(readFileSync(join(ROOT, 'config', 'gateway.yaml'), 'utf8'));
    shipped.keys.push(entry);
    const file = join(dir, 'with-new-key.yaml');
    writeFileSync(file, stringify(shipped));
    expect(sluice(['config', 'check', file]).stdout).toContain(': ok');

    delete shipped.upstreams.demo.url; // the demo backend on a free port, not 8081
    shipped.server = { ...shipped.server, metrics: { port: 0 } };
    const gw = await spawnGateway(stringify(shipped));
    try {
      const body = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
      expect((await post(`${gw.url}/v1/chat/completions`, body('demo-chat'), bearer(key))).status).toBe(200);
    } finally {
      gw.kill();
    }
  });

  it('hashes a key read on stdin', () => {
    const r = sluice(['keys', 'hash'], 'sk-sluice-example\n');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(hashKey('sk-sluice-example'));
  });

  it('refuses to create a key without --id', () => {
    const r = sluice(['keys', 'create']);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('--id');
  });
});

describe('sluice config check', () => {
  it.each(['gateway.yaml', 'container.yaml', 'reference.yaml', 'compose.yaml'])('exits 0 for the shipped config/%s', (name) => {
    const r = sluice(['config', 'check', join(__dirname, '..', '..', 'config', name)]);
    expect(r.stdout).toContain(': ok');
    expect(r.status).toBe(0);
  });

  it('prints every problem of a broken file with its path and exits 1', () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, [
      'keys:',
      '  - { id: a, sha256: "nothex", org: ghost }',
      'upstreams:',
      '  vllm: { url: "http://127.0.0.1:8000/v1" }',
      'routes:',
      '  - { model: "chat-*", upstream: vllm }',
      '  - { model: "img", upstream: vlm }',
      'plugins:',
      '  - { name: limits, nMax: 50 }',
    ].join('\n'));
    const r = sluice(['config', 'check', file]);
    expect(r.status).toBe(1);
    // Schema, cross-references and plugin settings in one round, though the schema already failed.
    expect(r.stdout).toContain('4 problem(s)');
    expect(r.stdout).toContain('keys[0].sha256');
    expect(r.stdout).toContain('keys[0].org: unknown org "ghost"');
    expect(r.stdout).toContain('routes[1].upstream: unknown upstream "vlm"');
    expect(r.stdout).toContain('plugins[0].nMax');
    const second = sluice(['config', 'check', file.replace('broken', 'missing')]);
    expect(second.status).toBe(1);
    expect(second.stdout).toContain('cannot read the file: it does not exist');
  });

  it('names every unknown field, not only the first of each block', () => {
    const file = join(dir, 'typos.yaml');
    writeFileSync(file, [
      'upstreams:',
      '  u: { url: "http://127.0.0.1:8000/v1", fromat: openai, timeoutMS: 5, maxSocket: 3, heders: {}, retyr: {} }',
      '  v: { url: "http://127.0.0.1:8001/v1", retry: { attempt: 2, backof: 5 } }',
      'routes:',
      '  - { model: m, upstream: u, dialekt: openai, fallback: [] }',
      'plugins:',
      '  - { name: limits, nmax: 5, nmin: 1 }',
    ].join('\n'));
    const r = sluice(['config', 'check', file]);
    expect(r.status).toBe(1);
    // Every one, once (the schema's and the registry's checks each list theirs).
    expect(r.stdout.split('\n').filter((l) => l.startsWith('  - ')).sort()).toEqual([
      '  - upstreams.u.fromat: unknown field', '  - upstreams.u.timeoutMS: unknown field', '  - upstreams.u.maxSocket: unknown field',
      '  - upstreams.u.heders: unknown field', '  - upstreams.u.retyr: unknown field',
      '  - upstreams.v.retry.attempt: unknown field', '  - upstreams.v.retry.backof: unknown field',
      '  - routes[0].dialekt: unknown field', '  - routes[0].fallback: unknown field',
      '  - plugins[0].nmax: unknown field', '  - plugins[0].nmin: unknown field',
    ].sort());
    expect(r.stdout).toContain('11 problem(s)');
  });

  it('names a field called toString, constructor or valueOf like any other unknown field, and ${constructor} as a variable not set', () => {
    const file = join(dir, 'prototype-names.yaml');
    writeFileSync(file, [
      'keys:',
      `  - { id: a, sha256: "${'a'.repeat(64)}", limits: { toString: 1, requests: 5 }, constructor: 1 }`,
      'orgs:',
      '  acme: { limits: { valueOf: 2 } }',
      'upstreams:',
      '  u: { url: "http://127.0.0.1:8000/v1", hasOwnProperty: 1 }',
      'routes:',
      '  - { model: "m-${constructor}", upstream: u, valueOf: 1 }',
      'plugins:',
      '  - { name: rate-limit, toString: 1 }',
    ].join('\n'));
    const r = sluice(['config', 'check', file]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    expect(r.stdout.split('\n').filter((l) => l.startsWith('  - ')).sort()).toEqual([
      '  - keys[0].limits.toString: unknown field', '  - keys[0].constructor: unknown field', '  - orgs.acme.limits.valueOf: unknown field',
      '  - upstreams.u.hasOwnProperty: unknown field', '  - routes[0].valueOf: unknown field', '  - plugins[0].toString: unknown field',
      '  - routes[0].model: environment variable constructor is not set and has no default (write ${constructor:-value} to give one)',
    ].sort());
  });

  it('reports cross-references and plugin settings by path', () => {
    const file = join(dir, 'refs.yaml');
    writeFileSync(file, 'keys:\n  - { id: a, sha256: "' + 'a'.repeat(64) + '", org: ghost }\nupstreams:\n  vllm: { url: "http://127.0.0.1:8000/v1" }\nroutes:\n  - { model: "x", upstream: vllm }\n  - { model: "y", upstream: vlm }\nplugins:\n  - { name: limits, nMax: 50 }\n');
    const r = sluice(['config', 'check', file]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('keys[0].org: unknown org "ghost"');
    expect(r.stdout).toContain('routes[1].upstream: unknown upstream "vlm"');
    expect(r.stdout).toContain('plugins[0].nMax');
  });
});
