// Stored responses in the real Redis, shared by two replicas (two response
// states, each on its own connection made as the gateway makes it): what one
// stores the other finds, only for the owner that stored it; Redis expires a
// response for both at once; a cancel sent on one replica reaches the request
// running on the other through pub/sub; each owner stays within its count
// (its oldest out first); a Redis that is down fails no request and answers
// reads with 503.
import pino from 'pino';
import { parseConfigText } from '../../src/config/load';
import type { GatewayConfig } from '../../src/config/schema';
import { closeRedisClient, createRedisClient, whenReady, type RedisClient } from '../../src/redis/client';
import { cancelChannel } from '../../src/responses-store/redis-cancel';
import { RedisResponseStore } from '../../src/responses-store/redis-store';
import { ResponseState } from '../../src/responses-store/state';
import { cancelResponse, deleteResponse, getResponse, listInputItems } from '../../src/responses-store/endpoints';
import { continueFrom } from '../../src/responses-store/resolve';
import { cleanupRedis, deletePrefix, sharedRedisUrl, startRedisServer, uniquePrefix } from '../support/redis';
import { storedRecord, storeLimits } from '../support/responses-state';
import { until } from '../support/wait';

const A = 'org:a';
const B = 'org:b';
const silent = pino({ level: 'silent' });

/** A roomy command timeout for a busy test machine; the outage test keeps the default (ioredis keeps a failed command's timer until it runs out). */
const configFor = (url: string, prefix: string, commandTimeoutMs = 2000): GatewayConfig =>
  parseConfigText(`redis: { url: "${url}", prefix: "${prefix}", commandTimeoutMs: ${commandTimeoutMs} }`, '(inline)', {});

const subscribers = async (client: RedisClient, prefix: string): Promise<number> =>
  ((await client.pubsub('NUMSUB', cancelChannel(prefix))) as [string, number])[1];

async function replica(config: GatewayConfig, logger = silent): Promise<{ state: ResponseState; client: RedisClient }> {
  const client = createRedisClient(config.redis!, logger);
  await whenReady(client, 5_000);
  const state = new ResponseState({ services: { redis: client }, logger });
  state.apply(config);
  return { state, client };
}

describe('stored responses in Redis, across two replicas', () => {
  const prefix = uniquePrefix();
  const config = configFor(sharedRedisUrl(), prefix);
  let one: Awaited<ReturnType<typeof replica>>;
  let two: Awaited<ReturnType<typeof replica>>;

  beforeAll(async () => {
    one = await replica(config);
    two = await replica(config);
  });
  afterAll(async () => {
    for (const r of [one, two]) {
      await r.state.close();
      await closeRedisClient(r.client);
    }
    await deletePrefix(sharedRedisUrl(), prefix);
    await cleanupRedis();
  });

  it('finds on one replica what the other stored, under one key with the TTL in Redis', async () => {
    const record = storedRecord('resp_shared', A, 'hello');
    expect(await one.state.save('resp_shared', record, 'req-1')).toBe(true);
    expect(await getResponse(two.state.store, A, 'resp_shared')).toEqual(record.response);
    expect(await continueFrom(two.state.store, A, 'resp_shared')).toEqual(record.history);
    const ttl = await one.client.pttl((one.state.store as RedisResponseStore).key('resp_shared', A));
    expect(ttl).toBeGreaterThan(2_592_000_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(2_592_000_000);
  });

  it('answers another org 404 for the response on GET, DELETE, input_items, cancel and previous_response_id, and deletes nothing', async () => {
    await one.state.save('resp_private', storedRecord('resp_private', A, 'private', 'in_progress'), 'req-1');
    const cancelled = jest.fn();
    one.state.running.add('resp_private', { cancel: cancelled });
    const s = two.state;
    for (const call of [
      getResponse(s.store, B, 'resp_private'),
      deleteResponse(s.store, B, 'resp_private'),
      listInputItems(s.store, B, 'resp_private', {}),
      cancelResponse(s, B, 'resp_private'),
    ]) await expect(call).rejects.toMatchObject({ reason: 'not_found', status: 404, param: 'response_id' });
    await expect(continueFrom(s.store, B, 'resp_private')).rejects.toMatchObject({ reason: 'not_found', status: 404, param: 'previous_response_id' });
    expect(await s.store.delete('resp_private', B)).toBe(false);
    expect(cancelled).not.toHaveBeenCalled();
    expect((await one.state.store.get('resp_private', A))?.response.status).toBe('in_progress');
    one.state.running.remove('resp_private');
    // Its owner deletes it from the other replica; it is gone from both.
    await expect(deleteResponse(s.store, A, 'resp_private')).resolves.toEqual({ id: 'resp_private', object: 'response.deleted', deleted: true });
    expect(await one.state.store.get('resp_private', A)).toBeUndefined();
  });

  it('lets a response expire on both replicas at once', async () => {
    const short = storeLimits({ ttlMs: 300 });
    const first = new RedisResponseStore(one.client, prefix, short);
    const second = new RedisResponseStore(two.client, prefix, short);
    await first.put('resp_brief', storedRecord('resp_brief', A, 'soon gone'));
    expect(await second.get('resp_brief', A)).toBeDefined();
    await until(async () => (await first.get('resp_brief', A)) === undefined, 'the response to expire', 5_000);
    expect(await second.get('resp_brief', A)).toBeUndefined();
  });

  it('refuses a response over the cap, and drops what its id held', async () => {
    const small = new RedisResponseStore(one.client, prefix, storeLimits({ maxResponseBytes: 1_000 }));
    await small.put('resp_big', storedRecord('resp_big', A, 'first', 'in_progress'));
    expect(await small.put('resp_big', storedRecord('resp_big', A, 'x'.repeat(2_000)))).toBe(false);
    expect(await two.state.store.get('resp_big', A)).toBeUndefined();
  });

  it('keeps each owner within its count, a delete and an expiry making room, the owner\'s oldest out first and told', async () => {
    const gone: Array<[string, number]> = [];
    const tell = (bound: string, n: number) => void gone.push([bound, n]);
    const store = new RedisResponseStore(one.client, prefix, storeLimits({ ownerMaxResponses: 3 }), tell);
    const brief = new RedisResponseStore(one.client, prefix, storeLimits({ ownerMaxResponses: 3, ttlMs: 200 }), tell);
    await brief.put('resp_o1', storedRecord('resp_o1', 'org:own', 'soon gone'));
    for (const id of ['resp_o2', 'resp_o3']) await store.put(id, storedRecord(id, 'org:own', id));
    await store.put('resp_x1', storedRecord('resp_x1', 'org:other', 'theirs'));
    await until(async () => (await store.get('resp_o1', 'org:own')) === undefined, 'the brief one to expire', 5_000);
    expect(await store.delete('resp_o2', 'org:own')).toBe(true);
    // Two places freed (one expired, one deleted): two more fit with nothing evicted.
    for (const id of ['resp_o4', 'resp_o5']) await store.put(id, storedRecord(id, 'org:own', id));
    expect(gone).toEqual([]);
    await store.remember('resp_o6', 'org:own');
    expect(gone).toEqual([['owner', 1]]);
    expect(await store.get('resp_o3', 'org:own')).toBeUndefined();
    expect(await store.owns('resp_o6', 'org:own')).toBe(true);
    expect(await store.owns('resp_o6', 'org:other')).toBe(false);
    expect(await store.get('resp_o6', 'org:own')).toBeUndefined();
    expect(await store.delete('resp_o6', 'org:own')).toBe(false);
    for (const id of ['resp_o4', 'resp_o5']) expect(await store.get(id, 'org:own')).toBeDefined();
    expect(await store.get('resp_x1', 'org:other')).toBeDefined();
  });

  it('cancels on one replica a response running on the other, through pub/sub', async () => {
    await until(async () => await subscribers(one.client, prefix) === 2, 'both replicas to subscribe');
    await one.state.save('resp_running', storedRecord('resp_running', A, 'long', 'in_progress'), 'req-1');
    const cancel = jest.fn(() => void one.state.save('resp_running', storedRecord('resp_running', A, 'long', 'cancelled'), 'req-1')
      .then(() => one.state.running.remove('resp_running')));
    one.state.running.add('resp_running', { cancel });
    const answer = await cancelResponse(two.state, A, 'resp_running');
    expect(cancel).toHaveBeenCalledTimes(1);
    expect(answer.status).toBe('cancelled');
    expect(answer.output).toHaveLength(1); // the runner's own end
    // A second cancel finds it ended: answered as stored, nothing stopped again.
    expect(await cancelResponse(two.state, A, 'resp_running')).toEqual(answer);
    expect(cancel).toHaveBeenCalledTimes(1);
  });
});

describe('stored responses while Redis cannot answer', () => {
  afterAll(() => cleanupRedis());

  it('fails no request: save resolves false, logged once with the request id; reads are 503 store_unavailable; all is well once it answers', async () => {
    const server = await startRedisServer();
    const lines: Array<{ level: number; msg: string; requestId?: string }> = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    // The default command timeout: a hung Redis fails each command after 100 ms.
    const prefix = uniquePrefix();
    const { state, client } = await replica(configFor(server.url, prefix, 100), logger);
    await until(async () => await subscribers(client, prefix) === 1, 'the relay to subscribe');
    try {
      server.pause();
      expect(await state.save('resp_1', storedRecord('resp_1', A, 'a'), 'req-1')).toBe(false);
      expect(await state.save('resp_2', storedRecord('resp_2', A, 'b'), 'req-2')).toBe(false);
      await expect(getResponse(state.store, A, 'resp_1')).rejects.toMatchObject({ reason: 'store_unavailable', status: 503 });
      await expect(continueFrom(state.store, A, 'resp_1')).rejects.toMatchObject({ reason: 'store_unavailable', status: 503 });
      await expect(cancelResponse(state, A, 'resp_1')).rejects.toMatchObject({ reason: 'store_unavailable', status: 503 });
      server.resume();
      expect(await state.save('resp_3', storedRecord('resp_3', A, 'c'), 'req-3')).toBe(true);
      expect(await state.store.get('resp_3', A)).toBeDefined();
      const said = lines.filter((l) => l.msg.startsWith('responses: the store')).map((l) => [l.level, l.requestId]);
      expect(said).toEqual([[40, 'req-1'], [20, 'req-2'], [30, undefined]]);
    } finally {
      server.resume();
      await state.close();
      await closeRedisClient(client);
    }
  });
});
