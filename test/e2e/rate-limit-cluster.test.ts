// Rate limits through a Redis Cluster: three throwaway masters made with
// `redis-cli --cluster create`, two gateways on `redis.nodes`. Fails (never
// skips) when redis-server is missing, with the command that installs it.
import { Cluster } from 'ioredis';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post } from '../support/http';
import { cleanupRedis, startRedisCluster, uniquePrefix, type RedisCluster } from '../support/redis';

jest.setTimeout(60_000);

const chat = { model: 'ok-a', messages: [{ role: 'user', content: 'hi' }] };

describe('rate limits on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let backend: Backend;
  let a: TestGateway;
  let b: TestGateway;
  let client: Cluster;
  const prefix = uniquePrefix();
  const keys = Array.from({ length: 6 }, (_, i) => makeKey(`ck${i}`, { org: 'acme', limits: { requests: 8, tokens: 1000, windowSeconds: 60 } }));

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    backend = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    const config = {
      redis: { nodes: cluster.nodes, prefix },
      keys: keys.map((k) => k.entry),
      orgs: { acme: { limits: { requests: 40, windowSeconds: 60 } } },
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'rate-limit' }],
    };
    a = await startGateway(config);
    b = await startGateway(config);
    client = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: Number(n.split(':')[1]) })));
  });
  afterAll(async () => {
    await Promise.all([a, b].map((g) => g?.close()));
    client?.disconnect();
    await backend?.close();
    await cleanupRedis();
  });

  it('connects to the cluster as one client', () => {
    expect(a.gateway.services.redis).toBeInstanceOf(Cluster);
    expect(a.gateway.services.redis!.status).toBe('ready');
  });

  it('enforces key budgets exactly across two replicas', async () => {
    const key = keys[0];
    const all = await Promise.all(Array.from({ length: 30 }, (_, i) => post(`${(i % 2 ? a : b).url}/v1/chat/completions`, chat, bearer(key.key))));
    expect(all.filter((r) => r.status === 200).length).toBe(8);
    for (const r of all.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(429);
      expect(r.body.error.reason).toBe('rate_limited');
      expect(r.headers['retry-after']).toMatch(/^\d+$/);
    }
  });

  it('enforces the org budget over keys whose counters live on different masters', async () => {
    // ck0 already used 8 of the org's 40; five more keys with 8 each could take 40 more.
    const rest = keys.slice(1);
    const all = await Promise.all(rest.flatMap((k, i) => Array.from({ length: 8 }, (_, j) => post(`${((i + j) % 2 ? a : b).url}/v1/chat/completions`, chat, bearer(k.key)))));
    expect(all.filter((r) => r.status === 200).length).toBe(32);
    expect(all.filter((r) => r.status === 429).every((r) => /organization's request budget/.test(r.body.error.message))).toBe(true);
  });

  it('charges tokens through the cluster', async () => {
    const key = `${prefix}{key:ck1}:tokens`;
    const deadline = Date.now() + 3000;
    while (Number(await client.get(key)) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(Number(await client.get(key))).toBeGreaterThan(0);
  });

  it('keeps each subject\'s keys in one slot, and spreads subjects over the masters', async () => {
    const slot = (k: string) => client.cluster('KEYSLOT', k) as Promise<number>;
    for (const id of ['ck0', 'ck3']) expect(await slot(`${prefix}{key:${id}}:requests`)).toBe(await slot(`${prefix}{key:${id}}:tokens`));
    const owners = new Set<string>();
    const shards = await client.cluster('SLOTS');
    for (const k of keys) {
      const s = await slot(`${prefix}{key:${k.entry.id}}:requests`);
      const shard = shards.find(([from, to]) => s >= from && s <= to)!;
      owners.add(String(shard[2][1]));
    }
    expect(owners.size).toBeGreaterThan(1);
    expect(Number(await client.get(`${prefix}{key:ck0}:requests`))).toBe(30);
  });
});
