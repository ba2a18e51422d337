// The bounds of the response store, through the gateway: in memory, thousands
// of stored responses never hold more than responses.memoryMaxBytes (the least
// recently used go first, the newest stay readable); in Redis, shared by two
// replicas, a response outlives responses.ttlSeconds on neither.
import { MemoryResponseStore } from '../../src/protocols/responses/state';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post } from '../support/http';
import { startOpenAIBackend, type OpenAIBackend } from '../support/openai-backend';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { until } from '../support/wait';

const key = makeKey('bounded', { org: 'a' });
const config = (backend: OpenAIBackend, extra: Record<string, unknown>) => ({
  keys: [key.entry], orgs: { a: {} },
  upstreams: { chat: { url: backend.base, format: 'openai' } },
  routes: [{ model: '*', upstream: 'chat' }],
  ...extra,
});
const create = (gw: TestGateway, input: string) => post(`${gw.url}/v1/responses`, { model: 'qwen-chat', input }, bearer(key.key));
const status = async (gw: TestGateway, id: string) => (await call('GET', `${gw.url}/v1/responses/${id}`, undefined, bearer(key.key))).status;

describe('stored responses within their bounds', () => {
  let backend: OpenAIBackend;
  const gateways: TestGateway[] = [];
  const prefix = uniquePrefix();

  beforeAll(async () => { backend = await startOpenAIBackend(); });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await backend?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  it('keeps thousands of responses in memory within memoryMaxBytes, the least recently used out first', async () => {
    const cap = 64 * 1024;
    const gw = await startGateway(config(backend, { responses: { memoryMaxBytes: cap, maxResponseBytes: 16 * 1024 } }));
    gateways.push(gw);
    const store = gw.gateway.services.responses.store;
    expect(store).toBeInstanceOf(MemoryResponseStore);
    const memory = store as MemoryResponseStore;
    const ids: string[] = [];
    let most = 0;
    for (let batch = 0; batch < 100; batch++) {
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(gw, `question ${batch}-${i} ${'x'.repeat(i * 10)}`)));
      for (const a of answers) ids.push(a.body.id);
      most = Math.max(most, memory.bytes);
    }
    expect(ids).toHaveLength(2000);
    expect(new Set(ids).size).toBe(2000);
    expect(most).toBeLessThanOrEqual(cap);
    expect(memory.bytes).toBeGreaterThan(cap / 2);
    // Each record is over a kilobyte: a few dozen fit, the oldest are gone and the newest are there.
    expect(memory.size).toBeLessThan(64);
    expect(await status(gw, ids[0])).toBe(404);
    expect(await status(gw, ids.at(-1)!)).toBe(200);
  });

  it('lets a response expire after ttlSeconds on both replicas sharing Redis', async () => {
    const shared = config(backend, { redis: { url: sharedRedisUrl(), prefix }, responses: { ttlSeconds: 1 } });
    const one = await startGateway(shared);
    const two = await startGateway(shared);
    gateways.push(one, two);
    const created = await create(one, 'Hi');
    expect(created.status).toBe(200);
    const { id } = created.body;
    await until(async () => await status(one, id) === 200 && await status(two, id) === 200, 'the response stored on both replicas', 900);
    await until(async () => await status(one, id) === 404 && await status(two, id) === 404, 'the response to expire on both replicas', 3_000);
    const continued = await post(`${two.url}/v1/responses`, { model: 'qwen-chat', previous_response_id: id, input: 'And then?' }, bearer(key.key));
    expect(continued.body.error).toMatchObject({ reason: 'not_found', param: 'previous_response_id' });
  });
});
