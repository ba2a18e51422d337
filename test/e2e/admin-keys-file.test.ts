// Runtime keys without Redis: kept in a file beside the config, written
// atomically and read at start, so a restart loses none: a made key, a
// rotation's grace period and a revocation all survive it. The file holds
// digests only. A file that is not a keys file stops the start untouched; a
// config without an admin section honours no runtime key.
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackend, type Backend } from '../support/backends';
import { startGateway, type TestGateway } from '../support/gateway';
import { bearer, post } from '../support/http';
import { admin, makeAdminKey } from '../support/admin';
import { validateConfig } from '../../src/config/load';
import { gatewayConfigCheck } from '../../src/gateway';

const chat = { model: 'm-1', messages: [{ role: 'user', content: 'hello' }] };

describe('runtime keys in a file (no Redis)', () => {
  const adminKey = makeAdminKey();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-keys-file-'));
  const file = join(dir, 'gateway.yaml');
  const keysFile = `${file}.keys.json`;
  let backend: Backend;
  const config = (extra: Record<string, unknown> = {}) => ({
    admin: { keys: [adminKey.digest] },
    orgs: { acme: {} },
    upstreams: { b: { url: backend.base, format: 'openai' } },
    routes: [{ model: '*', upstream: 'b' }],
    ...extra,
  });
  const start = (extra?: Record<string, unknown>) => startGateway(config(extra), { file, admin: true });
  const status = (gw: TestGateway, key: string): Promise<number> => post(`${gw.url}/v1/chat/completions`, chat, bearer(key)).then((r) => r.status);
  const ask = (gw: TestGateway, method: string, path: string, body?: unknown) => admin(gw.admin!.url, method, path, adminKey.key, body);

  beforeAll(async () => { backend = await startBackend({ format: 'openai' }); });
  afterAll(async () => { await backend.close(); });

  it('keeps made, rotated and revoked keys across a restart, digests only, in a file only its owner reads', async () => {
    const first = await start();
    let kept: string, old: string, fresh: string, revoked: string;
    try {
      kept = (await ask(first, 'POST', '/admin/keys', { id: 'kept', org: 'acme' })).body.key;
      old = (await ask(first, 'POST', '/admin/keys', { id: 'rotated' })).body.key;
      fresh = (await ask(first, 'POST', '/admin/keys/rotated/rotate', { graceSeconds: 600 })).body.key;
      revoked = (await ask(first, 'POST', '/admin/keys', { id: 'revoked' })).body.key;
      expect((await ask(first, 'DELETE', '/admin/keys/revoked')).status).toBe(200);
      for (const key of [kept, old, fresh]) expect(await status(first, key)).toBe(200);
      expect(await status(first, revoked)).toBe(401);
    } finally {
      await first.close();
    }
    const text = readFileSync(keysFile, 'utf8');
    expect(JSON.parse(text).keys.map((k: { id: string }) => k.id)).toEqual(['kept', 'rotated']);
    for (const key of [kept, old, fresh, revoked]) expect(text).not.toContain(key);
    expect(statSync(keysFile).mode & 0o777).toBe(0o600);

    const second = await start();
    try {
      for (const key of [kept, old, fresh]) expect(await status(second, key)).toBe(200);
      expect(await status(second, revoked)).toBe(401);
      expect((await ask(second, 'GET', '/admin/keys/kept')).body).toMatchObject({ id: 'kept', org: 'acme', source: 'runtime' });
      expect((await ask(second, 'GET', '/admin/keys/rotated')).body.rotation.graceUntil).toEqual(expect.any(String));
    } finally {
      await second.close();
    }
  });

  it('honours no runtime key while the config has no admin section, and all of them again once it has', async () => {
    const gw = await start();
    try {
      const key = (await ask(gw, 'POST', '/admin/keys', { id: 'toggled' })).body.key as string;
      expect(await status(gw, key)).toBe(200);
      const reload = async (extra: Record<string, unknown>) => {
        const raw = { server: { port: 0 }, ...config(), ...extra };
        await gw.gateway.swap({ config: validateConfig(raw, file, {}, gatewayConfigCheck()), file });
      };
      await reload({ admin: undefined });
      expect(await status(gw, key)).toBe(401);
      expect((await ask(gw, 'GET', '/admin/keys')).status).toBe(401); // no admin keys in force either
      await reload({});
      expect(await status(gw, key)).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('refuses to start on a file that is not a keys file, and leaves it as it was', async () => {
    const bad = join(dir, 'broken.yaml');
    for (const text of ['{"keys": [', '{"keys": {}}', '{"keys": [{"id": "x"}]}']) {
      writeFileSync(`${bad}.keys.json`, text);
      await expect(startGateway(config(), { file: bad })).rejects.toThrow(/the runtime keys file .*broken\.yaml\.keys\.json \(admin\.keysFile\): .*fix or move it/);
      expect(readFileSync(`${bad}.keys.json`, 'utf8')).toBe(text);
    }
  });
});
