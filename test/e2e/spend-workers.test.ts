// Spend records in a real process with two workers, as the image runs it:
// on the real Redis (the workers write there, the primary's admin listener
// reads there) and without it (the primary keeps them, exact for both
// workers). The same mixed run as spend.test.ts, each request on a
// connection of its own so both workers serve some; the usage export's sums
// equal the spend API's and the machine's metrics exactly.
import { startBackend, type Backend } from '../support/backends';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { makeAdminKey } from '../support/admin';
import { makeKey } from '../support/gateway';
import { exported, metricSums, mixedRun, spendConfig, spendSums, sumsOf } from '../support/spend';
import { until } from '../support/wait';

const FRESH = true;

describe('spend records across two workers', () => {
  const adminKey = makeAdminKey();
  const alice = makeKey('alice', { org: 'acme' });
  const bob = makeKey('bob', { org: 'beta' });
  let backend: Backend;
  const running: GatewayProcess[] = [];

  beforeAll(async () => { backend = await startBackend({ format: 'openai', events: 6, gapMs: 5 }); });
  afterEach(() => { for (const gw of running.splice(0)) gw.kill(); });
  afterAll(async () => { await backend.close(); });

  it.each(['redis', 'memory'] as const)('on the %s store, the export, the spend API and the metrics agree exactly', async (store) => {
    const prefix = uniquePrefix();
    const [adminPort, metricsPort] = [await freePort(), await freePort()];
    const config = spendConfig(backend.base, store, { url: sharedRedisUrl(), prefix }, adminKey.digest, [alice.entry, bob.entry]);
    const gw = await spawnGateway(JSON.stringify({
      ...config,
      server: { host: '127.0.0.1', port: 0, workers: 2, drainSeconds: 1, metrics: { port: metricsPort } },
      admin: { port: adminPort, keys: [adminKey.digest] },
    }));
    running.push(gw);
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    try {
      const requests = await mixedRun(gw.url, [alice.key, bob.key, alice.key, bob.key], FRESH);
      await until(async () => (await spendSums(adminUrl, adminKey.key)).requests === requests, 'every request in the spend sums');
      const pids = new Set(gw.logs.filter((l) => l.msg === 'request').map((l) => l.pid));
      expect(pids.size).toBe(2);

      const spend = await spendSums(adminUrl, adminKey.key);
      expect(spend.cost_nanodollars).toBeGreaterThan(0);
      expect(sumsOf(await exported(adminUrl, adminKey.key, 'jsonl'))).toEqual(spend);
      expect(sumsOf(await exported(adminUrl, adminKey.key, 'csv'))).toEqual(spend);
      const { requests: _n, ...sums } = spend;
      expect(await metricSums(`http://127.0.0.1:${metricsPort}`)).toEqual(sums);
      const [a, b] = await Promise.all([spendSums(adminUrl, adminKey.key, '?key=alice'), spendSums(adminUrl, adminKey.key, '?org=beta')]);
      expect(a.requests + b.requests + 1).toBe(requests);
      expect(a.cost_nanodollars + b.cost_nanodollars).toBe(spend.cost_nanodollars);
    } finally {
      if (store === 'redis') await deletePrefix(sharedRedisUrl(), prefix);
    }
  });
});
