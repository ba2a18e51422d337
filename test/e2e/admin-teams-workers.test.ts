// Runtime teams in a real process with two workers and no Redis: the primary
// keeps the teams in the keys file beside the keys and hands them to its
// workers. A team made through the admin API governs both workers within
// 1 s (its allow-list), its budget is one count across the workers (the
// primary's), and the keys file keeps it across a restart.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackend, type Backend } from '../support/backends';
import { bearer, post, type JsonResponse } from '../support/http';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';
import { admin, makeAdminKey, within } from '../support/admin';
import { makeKey } from '../support/gateway';

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hello' }] });
const PROBES = 4;
const BUDGET = 12;

describe('runtime teams across workers, without Redis', () => {
  const adminKey = makeAdminKey();
  const warm = makeKey('warm');
  let backend: Backend;
  const running: GatewayProcess[] = [];

  beforeAll(async () => { backend = await startBackend({ format: 'openai' }); });
  afterAll(async () => {
    for (const gw of running) gw.kill();
    await backend.close();
  });

  it('a team reaches both workers within 1 s, its budget is one count across them, and it outlives a restart', async () => {
    const keysFile = join(mkdtempSync(join(tmpdir(), 'sluice-teams-workers-')), 'keys.json');
    const adminPort = await freePort();
    const config = JSON.stringify({
      server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 1, metrics: { port: 0 } },
      admin: { port: adminPort, keys: [adminKey.digest], keysFile },
      keys: [warm.entry],
      orgs: { acme: {} },
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'rate-limit' }],
    });
    const spawn = async () => {
      const gw = await spawnGateway(config);
      running.push(gw);
      return gw;
    };
    // Each on a connection of its own, so both workers answer some.
    const probe = (gw: GatewayProcess, key: string, model: string): Promise<JsonResponse[]> =>
      Promise.all(Array.from({ length: PROBES }, () => post(`${gw.url}/v1/chat/completions`, chat(model), bearer(key), true)));
    const api = `http://127.0.0.1:${adminPort}`;

    const first = await spawn();
    expect((await probe(first, warm.key, 'm-1')).every((r) => r.status === 200)).toBe(true);
    expect((await admin(api, 'POST', '/admin/teams', adminKey.key, { name: 'narrow', org: 'acme', models: ['m-1'], limits: { requests: BUDGET, windowSeconds: 3600 } })).status).toBe(201);
    const key = (await admin(api, 'POST', '/admin/keys', adminKey.key, { id: 'member', org: 'acme', team: 'narrow' })).body.key as string;
    // The key and its team on both workers: m-1 answers everywhere (a key whose team a worker lacks may use no
    // model), and m-2, outside the team's allow-list, is refused everywhere. Each 200 spends the team's budget.
    let spent = 0;
    await within(1000, 'the team on both workers', async () => {
      const answers = await probe(first, key, 'm-1');
      spent += answers.filter((r) => r.status === 200).length;
      return answers.every((r) => r.status === 200);
    });
    expect((await probe(first, key, 'm-2')).every((r) => r.status === 403 && r.body.error.reason === 'model_not_allowed')).toBe(true);
    // The rest of the team's budget across both workers, then the team's refusal: one count, the primary's.
    const answers = [...await probe(first, key, 'm-1'), ...await probe(first, key, 'm-1'), ...await probe(first, key, 'm-1')];
    expect(answers.filter((r) => r.status === 200)).toHaveLength(Math.max(BUDGET - spent, 0));
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expect(r.body.error).toMatchObject({ reason: 'rate_limited', param: 'team' });
    first.kill();
    await first.exited;

    const second = await spawn();
    expect((await probe(second, key, 'm-2')).every((r) => r.status === 403)).toBe(true);
    const listed = await admin(api, 'GET', '/admin/teams/narrow', adminKey.key);
    expect(listed.body).toMatchObject({ name: 'narrow', source: 'runtime', keys: 1, models: ['m-1'] });
  });
});
