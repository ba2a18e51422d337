// What a runtime key without an org stores is owned by that key's identity
// (minted when the key is made, kept in its record), not by its id: a key
// made again under a revoked key's id reads, lists, deletes and continues
// nothing the old one stored (404, as for an id that never existed), while a
// key that is changed or rotated keeps what it stored. In the memory store
// (keys in a file) and in Redis (keys in Redis) alike.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { admin, makeAdminKey } from '../support/admin';
import { startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post, type JsonResponse } from '../support/http';
import { startOpenAIBackend, type OpenAIBackend } from '../support/openai-backend';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';

describe.each([['memory', false], ['Redis', true]])('stored responses of a runtime key without an org (%s)', (_where, shared) => {
  const adminKey = makeAdminKey();
  const prefix = uniquePrefix();
  let backend: OpenAIBackend;
  let gw: TestGateway;

  beforeAll(async () => {
    backend = await startOpenAIBackend();
    gw = await startGateway({
      admin: { keys: [adminKey.digest] },
      ...(shared && { redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 } }),
      upstreams: { chat: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'chat' }],
    }, { admin: true, file: join(mkdtempSync(join(tmpdir(), 'sluice-key-identity-')), 'gateway.yaml') });
  });
  afterAll(async () => {
    await gw?.close();
    await backend?.close();
    if (shared) await deletePrefix(sharedRedisUrl(), prefix);
  });

  const ask = (method: string, path: string, body?: unknown) => admin(gw.admin!.url, method, path, adminKey.key, body);
  const makeKey = async (id: string): Promise<string> => {
    const made = await ask('POST', '/admin/keys', { id });
    expect(made.status).toBe(201);
    return made.body.key;
  };
  const as = (key: string) => ({
    create: (body: Record<string, unknown>) => post(`${gw.url}/v1/responses`, { model: 'qwen-chat', ...body }, bearer(key)),
    get: (path: string) => call('GET', `${gw.url}/v1/responses/${path}`, undefined, bearer(key)),
    delete: (id: string) => call('DELETE', `${gw.url}/v1/responses/${id}`, undefined, bearer(key)),
  });
  const withoutId = (res: JsonResponse, id: string) => ({ status: res.status, error: { ...res.body.error, message: res.body.error.message.replace(id, '<id>') } });

  it('gives a key made again under a revoked key\'s id nothing the old one stored: 404 as for an id never issued', async () => {
    const old = as(await makeKey('solo'));
    const created = await old.create({ input: 'My secret plan' });
    expect(created.status).toBe(200);
    const { id } = created.body;
    expect((await old.get(id)).status).toBe(200);
    expect((await ask('DELETE', '/admin/keys/solo')).body).toEqual({ id: 'solo', revoked: true });

    const heir = as(await makeKey('solo'));
    const never = 'resp_0000000000000000000000000000000000000000deadbeef';
    for (const [what, probe] of [
      ['GET', (x: string) => heir.get(x)],
      ['input_items', (x: string) => heir.get(`${x}/input_items`)],
      ['DELETE', (x: string) => heir.delete(x)],
      ['previous_response_id', (x: string) => heir.create({ previous_response_id: x, input: 'And then?' })],
    ] as const) {
      const answer = await probe(id);
      expect({ what, status: answer.status, reason: answer.body.error?.reason }).toEqual({ what, status: 404, reason: 'not_found' });
      expect(withoutId(answer, id)).toEqual(withoutId(await probe(never), never));
    }
    // The new key stores and reads its own.
    const own = await heir.create({ input: 'Hi' });
    expect((await heir.get(own.body.id)).status).toBe(200);
  });

  it('keeps what a key stored through a change and a rotation of that key', async () => {
    const first = as(await makeKey('steady'));
    const { id } = (await first.create({ input: 'Hi' })).body;
    expect((await ask('PATCH', '/admin/keys/steady', { priority: 'high' })).status).toBe(200);
    const rotated = await ask('POST', '/admin/keys/steady/rotate', { graceSeconds: 0 });
    expect(rotated.status).toBe(200);
    const after = as(rotated.body.key);
    expect((await after.get(id)).status).toBe(200);
    expect((await after.create({ previous_response_id: id, input: 'And then?' })).status).toBe(200);
  });
});
