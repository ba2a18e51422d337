// The `sluice` command, run as a real process: a created key, pasted into a
// config, authenticates; `config check` reports a broken file's paths.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackend, type Backend } from '../support/backends';
import { bearer, post } from '../support/http';
import { CLI_JS, spawnGateway } from '../support/process';
import { hashKey } from '../../src/auth/keys';

const sluice = (args: string[], input?: string) => spawnSync(process.execPath, [CLI_JS, ...args], { input, encoding: 'utf8' });
const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));

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
  it.each(['gateway.yaml', 'reference.yaml', 'compose.yaml'])('exits 0 for the shipped config/%s', (name) => {
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
    expect(r.stdout).toContain('keys[0].sha256');
    expect(r.stdout).toContain('problem(s)');
    const second = sluice(['config', 'check', file.replace('broken', 'missing')]);
    expect(second.status).toBe(1);
    expect(second.stdout).toContain('cannot read the file');
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
