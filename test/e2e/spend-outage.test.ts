// A spend store that cannot answer never fails or slows a request: with
// Redis killed, requests keep answering 200, their records are dropped and
// counted (sluice_spend_dropped_total), the outage is one warn line, and the
// spend API answers 503 store_unavailable; once Redis is back, records are
// kept again and that is one info line.
import pino from 'pino';
import type { Counter } from 'prom-client';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { admin, makeAdminKey } from '../support/admin';
import { bearer, post } from '../support/http';
import { cleanupRedis, startRedisServer, type RedisProcess } from '../support/redis';
import { chat, PRICING, spendSums } from '../support/spend';
import { until } from '../support/wait';

jest.setTimeout(30_000);

const DOWN = 'spend: the store cannot answer; usage records are dropped (sluice_spend_dropped_total) until it can';
const BACK = 'spend: the store takes usage records again';

describe('spend records while Redis goes down and comes back', () => {
  const adminKey = makeAdminKey();
  const alice = makeKey('alice');
  const lines: Array<Record<string, unknown>> = [];
  let backend: Backend;
  let server: RedisProcess;
  let gw: TestGateway;

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    server = await startRedisServer();
    gw = await startGateway({
      redis: { url: server.url, prefix: 'spend-outage:' },
      admin: { keys: [adminKey.digest] },
      keys: [alice.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      pricing: PRICING,
    }, { admin: true, logger: pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) }) });
  });
  afterAll(async () => {
    await gw?.close();
    await backend?.close();
    await cleanupRedis();
  });

  const send = () => post(`${gw.url}/v1/chat/completions`, chat('hello'), bearer(alice.key)).then((r) => r.status);
  const dropped = async () => (await (gw.gateway.services.metrics!.getSingleMetric('sluice_spend_dropped_total') as Counter).get()).values[0]?.value ?? 0;
  const said = (msg: string) => lines.filter((l) => l.msg === msg).length;

  it('drops and counts the records while it is down, answers every request, and keeps records again once it is back', async () => {
    const adminUrl = gw.admin!.url;
    expect(await send()).toBe(200);
    await until(async () => (await spendSums(adminUrl, adminKey.key)).requests === 1, 'the first record kept');

    await server.stop();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push(await send());
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    await until(async () => await dropped() === 5, 'five records dropped');
    expect(said(DOWN)).toBe(1);
    const read = await admin(adminUrl, 'GET', '/admin/spend', adminKey.key);
    expect([read.status, read.body.error.reason]).toEqual([503, 'store_unavailable']);

    await server.start();
    await until(() => gw.gateway.services.redis!.status === 'ready', 'the connection back');
    expect(await send()).toBe(200);
    await until(() => said(BACK) === 1, 'the store taking records again');
    expect((await spendSums(adminUrl, adminKey.key)).requests).toBe(1); // a fresh, empty server
    expect(said(DOWN)).toBe(1);
  });
});
