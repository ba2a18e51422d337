// `sluice keys` against the admin API, run as a real process: create, list,
// show, update, rotate and revoke a key that the gateway honours as each
// says; a refusal on stderr with exit 1; the admin key only from the
// environment; `keys create --admin` minting an admin key.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackend, type Backend } from '../support/backends';
import { startGateway, type TestGateway } from '../support/gateway';
import { bearer, post } from '../support/http';
import { makeAdminKey } from '../support/admin';
import { sluice } from '../support/process';
import { hashKey } from '../../src/auth/keys';

const chat = { model: 'm-1', messages: [{ role: 'user', content: 'hello' }] };
const shownKey = (out: string): string => /^key \(shown once, store it now\): (\S+)$/m.exec(out)![1];
const jsonAfterKey = (out: string): any => JSON.parse(out.slice(out.indexOf('\n') + 1));

// Each test starts the CLI as a process eight to ten times: on a busy machine a start takes seconds.
jest.setTimeout(90_000);

describe('sluice keys against the admin API', () => {
  const adminKey = makeAdminKey();
  let backend: Backend;
  let gw: TestGateway;
  let env: Record<string, string>;
  const status = (key: string): Promise<number> => post(`${gw.url}/v1/chat/completions`, chat, bearer(key)).then((r) => r.status);

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai' });
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-admin-'));
    gw = await startGateway({
      admin: { keys: [adminKey.digest] },
      orgs: { acme: {} },
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'rate-limit' }],
    }, { file: join(dir, 'gateway.yaml'), admin: true });
    env = { SLUICE_ADMIN_URL: gw.admin!.url, SLUICE_ADMIN_KEY: adminKey.key };
  });
  afterAll(async () => {
    await gw?.close();
    await backend?.close();
  });

  it('creates, lists, shows, updates, rotates and revokes a key the gateway honours as each says', async () => {
    const made = await sluice(['keys', 'create', '--id', 'ci-bot', '--org', 'acme', '--models', 'm-*', '--limits', '{"requests":50}'], env);
    expect([made.status, made.stderr]).toEqual([0, '']);
    const key = shownKey(made.stdout);
    expect(jsonAfterKey(made.stdout)).toMatchObject({ id: 'ci-bot', org: 'acme', models: ['m-*'], limits: { requests: 50 } });
    expect(await status(key)).toBe(200);

    const listed = await sluice(['keys', 'list'], env);
    expect(JSON.parse(listed.stdout).map((k: { id: string }) => k.id)).toEqual(['ci-bot']);
    expect(JSON.parse((await sluice(['keys', 'show', 'ci-bot'], env)).stdout)).toMatchObject({ id: 'ci-bot', org: 'acme' });

    const updated = await sluice(['keys', 'update', 'ci-bot', '--limits', '{"requests":1}', '--clear', 'org,models', '--admin-url', gw.admin!.url], { SLUICE_ADMIN_KEY: adminKey.key });
    expect(JSON.parse(updated.stdout)).toMatchObject({ id: 'ci-bot', org: null, models: null, limits: { requests: 1 } });
    expect([await status(key), await status(key)]).toEqual([200, 429]); // a budget of 1, counted afresh in memory

    const rotated = await sluice(['keys', 'rotate', 'ci-bot', '--grace', '600'], env);
    const fresh = shownKey(rotated.stdout);
    expect(fresh).not.toBe(key);
    expect(jsonAfterKey(rotated.stdout).rotation.graceUntil).toEqual(expect.any(String));

    expect(JSON.parse((await sluice(['keys', 'revoke', 'ci-bot'], env)).stdout)).toEqual({ id: 'ci-bot', revoked: true });
    expect([await status(key), await status(fresh)]).toEqual([401, 401]);
  });

  it('prints a refusal on stderr and exits 1; exits 2 without an admin key or a key id', async () => {
    const missing = await sluice(['keys', 'show', 'nobody'], env);
    expect([missing.status, missing.stdout]).toEqual([1, '']);
    expect(missing.stderr).toMatch(/^sluice: 404 not_found: /);
    const bad = await sluice(['keys', 'create', '--id', 'x', '--limits', '{"requests":0}'], env);
    expect([bad.status, bad.stderr]).toEqual([1, expect.stringMatching(/^sluice: 400 invalid_request: limits\.requests: /)]);
    const wrong = await sluice(['keys', 'list'], { ...env, SLUICE_ADMIN_KEY: 'sk-not-admin' });
    expect([wrong.status, wrong.stderr]).toEqual([1, expect.stringMatching(/^sluice: 401 unauthorized: /)]);
    const noKey = await sluice(['keys', 'list'], { SLUICE_ADMIN_URL: gw.admin!.url });
    expect([noKey.status, noKey.stderr]).toEqual([2, expect.stringMatching(/^sluice: set SLUICE_ADMIN_KEY/)]);
    expect((await sluice(['keys', 'revoke'], env)).status).toBe(2);
    expect((await sluice(['keys', 'list'])).stderr).toMatch(/--admin-url URL or SLUICE_ADMIN_URL/);
  });

  it('creates, lists, shows, updates and deletes a team; a key of the team is bound by its models; delete refused while a key names it', async () => {
    const made = await sluice(['teams', 'create', '--name', 'search', '--org', 'acme', '--models', 'm-1', '--limits', '{"requests":100}'], env);
    expect([made.status, made.stderr]).toEqual([0, '']);
    expect(JSON.parse(made.stdout)).toMatchObject({ name: 'search', source: 'runtime', org: 'acme', models: ['m-1'], limits: { requests: 100 }, keys: 0 });
    const key = shownKey((await sluice(['keys', 'create', '--id', 'searcher', '--org', 'acme', '--team', 'search'], env)).stdout);
    expect(await status(key)).toBe(200);
    expect(await post(`${gw.url}/v1/chat/completions`, { ...chat, model: 'm-2' }, bearer(key)).then((r) => r.status)).toBe(403);
    expect(JSON.parse((await sluice(['teams', 'list'], env)).stdout).map((t: { name: string; keys: number }) => [t.name, t.keys])).toEqual([['search', 1]]);
    const updated = await sluice(['teams', 'update', 'search', '--clear', 'models'], env);
    expect(JSON.parse(updated.stdout)).toMatchObject({ name: 'search', models: null, limits: { requests: 100 } });
    expect(await post(`${gw.url}/v1/chat/completions`, { ...chat, model: 'm-2' }, bearer(key)).then((r) => r.status)).toBe(200);
    const refused = await sluice(['teams', 'delete', 'search'], env);
    expect([refused.status, refused.stderr]).toEqual([1, expect.stringMatching(/^sluice: 409 conflict: .*named by 1 key/)]);
    expect((await sluice(['keys', 'revoke', 'searcher'], env)).status).toBe(0);
    expect(JSON.parse((await sluice(['teams', 'delete', 'search'], env)).stdout)).toEqual({ name: 'search', deleted: true });
    expect((await sluice(['teams', 'show', 'search'], env)).stderr).toMatch(/^sluice: 404 not_found: /);
    expect((await sluice(['teams', 'create', '--name', 'x'], env)).status).toBe(2);
    expect((await sluice(['teams', 'delete'], env)).status).toBe(2);
  });

  it('mints an admin key offline, whose digest line opens the admin API', async () => {
    const out = await sluice(['keys', 'create', '--admin']);
    expect(out.status).toBe(0);
    const key = /^admin key \(shown once, store it now\): (\S+)$/m.exec(out.stdout)![1];
    expect(out.stdout).toContain(`    - "${hashKey(key)}"`);
  });
});
