// `sluice spend` and `sluice usage export` as a real process against the
// admin API of a gateway that served a mixed run: spend prints the API's
// JSON, the export writes every record (JSON Lines or CSV) with the same
// sums; a bad option is a usage error (exit 2), a refusal exit 1.
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { makeAdminKey } from '../support/admin';
import { sluice } from '../support/process';
import { mixedRun, PRICING, spendSums, sumsOf } from '../support/spend';
import { until } from '../support/wait';

const csvRecords = (text: string): Array<Record<string, unknown>> => {
  const [header, ...rows] = text.trim().split('\n').map((l) => l.split(','));
  return rows.map((cells) => Object.fromEntries(header.map((h, i) => [h, cells[i] === '' ? null : Number.isNaN(Number(cells[i])) ? cells[i] : Number(cells[i])])));
};

describe('sluice spend and sluice usage export', () => {
  const adminKey = makeAdminKey();
  const alice = makeKey('alice', { org: 'acme', team: 'core' });
  let backend: Backend;
  let gw: TestGateway;
  let env: Record<string, string>;
  let requests: number;

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 4, gapMs: 5 });
    gw = await startGateway({
      admin: { keys: [adminKey.digest] },
      keys: [alice.entry],
      orgs: { acme: {} },
      teams: { core: { org: 'acme' } },
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      pricing: PRICING,
      plugins: [{ name: 'content-filter', terms: ['forbidden phrase'] }],
    }, { admin: true });
    env = { SLUICE_ADMIN_URL: gw.admin!.url, SLUICE_ADMIN_KEY: adminKey.key };
    requests = await mixedRun(gw.url, [alice.key]);
    await until(async () => (await spendSums(gw.admin!.url, adminKey.key)).requests === requests, 'every request in the spend sums');
  });
  afterAll(async () => {
    await gw?.close();
    await backend?.close();
  });

  it('spend prints the sums of a key, of an org, and of the whole gateway', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const byKey = await sluice(['spend', '--key', 'alice', '--from', today, '--to', today], env);
    expect(byKey.status).toBe(0);
    const body = JSON.parse(byKey.stdout);
    expect(body).toMatchObject({ object: 'spend', from: today, to: today, key: { id: 'alice' } });
    expect(body.key.total.requests).toBe(requests - 1);
    expect(body.key.days).toHaveLength(1);
    const all = JSON.parse((await sluice(['spend'], env)).stdout);
    expect(all.all.total.requests).toBe(requests);
    expect(JSON.parse((await sluice(['spend', '--org', 'acme'], env)).stdout).org.total).toEqual(body.key.total);
    expect(JSON.parse((await sluice(['spend', '--team', 'core'], env)).stdout).team).toEqual({ ...body.key, id: 'core' });
  });

  it('usage export --team writes that team\'s records alone, with the spend API\'s sums for the team', async () => {
    const team = await spendSums(gw.admin!.url, adminKey.key, '?team=core');
    const core = await sluice(['usage', 'export', '--since', '2000-01-01', '--team', 'core'], env);
    expect(core.status).toBe(0);
    const records = core.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(records.every((r) => r.team === 'core' && r.key === 'alice')).toBe(true);
    expect(sumsOf(records)).toEqual(team);
    expect((await sluice(['usage', 'export', '--since', '2000-01-01', '--team', 'nobody'], env)).stdout).toBe('');
  });

  it('usage export writes every record, as JSON Lines and as CSV, with the spend API\'s sums', async () => {
    const spend = await spendSums(gw.admin!.url, adminKey.key);
    const jsonl = await sluice(['usage', 'export', '--since', '2000-01-01', '--format', 'jsonl'], env);
    expect(jsonl.status).toBe(0);
    expect(sumsOf(jsonl.stdout.trim().split('\n').map((l) => JSON.parse(l)))).toEqual(spend);
    const csv = await sluice(['usage', 'export', '--since', '2000-01-01', '--format', 'csv'], env);
    expect(csv.stdout.split('\n')[0]).toBe('time,request_id,key,team,org,user,model,protocol,endpoint,status,reason,prompt_tokens,cached_tokens,completion_tokens,reasoning_tokens,estimated,cost,server,tool,outcome,duration_ms,bytes_in,bytes_out,audio_seconds,characters');
    expect(sumsOf(csvRecords(csv.stdout))).toEqual(spend);
  });

  it('a missing --since or a bad --format is a usage error; a bad date a refusal; a wrong admin key a 401', async () => {
    const noSince = await sluice(['usage', 'export', '--format', 'csv'], env);
    expect([noSince.status, noSince.stderr]).toEqual([2, expect.stringContaining('--since')]);
    expect((await sluice(['usage', 'export', '--since', '2026-01-01', '--format', 'xml'], env)).status).toBe(2);
    const badDate = await sluice(['spend', '--from', '2026-02-30'], env);
    expect([badDate.status, badDate.stderr]).toEqual([1, expect.stringContaining('400 invalid_request: from must be a date')]);
    const wrongKey = await sluice(['spend'], { ...env, SLUICE_ADMIN_KEY: alice.key });
    expect([wrongKey.status, wrongKey.stderr]).toEqual([1, expect.stringContaining('401 unauthorized')]);
  });
});
