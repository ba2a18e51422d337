// Stored responses belong to the org whose key stored them: a key of another
// org gets 404 not_found for the id on every endpoint that reads it (GET,
// DELETE, input_items, cancel) and as previous_response_id, exactly the
// answer for an id that never existed, and nothing of it changes; a second
// key of the owning org reads it. With responses.store off a native backend
// keeps the turns, and a previous_response_id reaches it only from the org
// the gateway relayed that id to (in memory and in Redis alike).
import { bearer, call, post, postSse, type JsonResponse } from '../support/http';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { NATIVE_MODEL, RESPONSES_ROUTES, startResponsesStack, type ResponsesStack } from '../support/responses-stack';

/** The error with the id taken out, to compare the answers for two ids. */
const withoutId = (res: JsonResponse, id: string) => ({ status: res.status, error: { ...res.body.error, message: res.body.error.message.replace(id, '<id>') } });

describe.each(RESPONSES_ROUTES)('stored responses are isolated by org, %s backend', (_kind, model) => {
  let stack: ResponsesStack;

  beforeAll(async () => { stack = await startResponsesStack(); });
  afterAll(() => stack?.close());

  const as = (key: string) => ({
    get: (path: string) => call('GET', `${stack.baseURL}/responses/${path}`, undefined, bearer(key)),
    delete: (id: string) => call('DELETE', `${stack.baseURL}/responses/${id}`, undefined, bearer(key)),
    cancel: (id: string) => post(`${stack.baseURL}/responses/${id}/cancel`, {}, bearer(key)),
    create: (body: Record<string, unknown>) => post(`${stack.baseURL}/responses`, { model, ...body }, bearer(key)),
  });

  it('answers another org 404 for the id on GET, DELETE, input_items, cancel and previous_response_id, as for an id that never existed', async () => {
    const a = as(stack.key);
    const b = as(stack.otherOrgKey);
    const created = await a.create({ input: 'Hi' });
    expect(created.status).toBe(200);
    const { id } = created.body;
    const missing = 'resp_0000000000000000000000000000000000000000deadbeef';

    for (const [what, probe] of [
      ['GET', (x: string) => b.get(x)],
      ['DELETE', (x: string) => b.delete(x)],
      ['input_items', (x: string) => b.get(`${x}/input_items`)],
      ['cancel', (x: string) => b.cancel(x)],
      ['previous_response_id', (x: string) => b.create({ previous_response_id: x, input: 'And then?' })],
    ] as const) {
      const theirs = await probe(id);
      expect({ what, status: theirs.status, reason: theirs.body.error.reason }).toEqual({ what, status: 404, reason: 'not_found' });
      expect(theirs.body.error.param).toBe(what === 'previous_response_id' ? 'previous_response_id' : 'response_id');
      expect(withoutId(theirs, id)).toEqual(withoutId(await probe(missing), missing));
    }

    // Nothing changed: org a still reads it, continues from it, and a second key of org a sees it too.
    expect((await a.get(id)).body).toEqual(created.body);
    expect((await a.get(`${id}/input_items`)).body.data).toHaveLength(1);
    expect((await as(stack.sameOrgKey).get(id)).status).toBe(200);
    expect((await a.create({ previous_response_id: id, input: 'And then?' })).status).toBe(200);
    expect((await a.delete(id)).body).toEqual({ id, object: 'response.deleted', deleted: true });
  });
});

describe.each([['memory', false], ['Redis', true]])('with responses.store off, a relayed previous_response_id (%s)', (_where, shared) => {
  const prefix = uniquePrefix();
  let stack: ResponsesStack;

  beforeAll(async () => {
    stack = await startResponsesStack({ responses: { store: false }, ...(shared && { redis: { url: sharedRedisUrl(), prefix, commandTimeoutMs: 2000 } }) });
  });
  afterAll(async () => {
    await stack?.close();
    if (shared) await deletePrefix(sharedRedisUrl(), prefix);
  });

  const create = (key: string, body: Record<string, unknown>) => post(`${stack.baseURL}/responses`, { model: NATIVE_MODEL, ...body }, bearer(key));

  it('reaches the backend only from the org it was relayed to; another org gets the 404 of an id never issued', async () => {
    const json = await create(stack.key, { input: 'Hi' });
    expect(json.status).toBe(200);
    const streamed = await postSse(`${stack.baseURL}/responses`, { model: NATIVE_MODEL, input: 'Hi again', stream: true }, bearer(stack.key));
    const created = JSON.parse(streamed.events.find((e) => e.event === 'response.created')!.data);
    // The backend's own ids, relayed as it gave them.
    const ids = [json.body.id as string, created.response.id as string];
    expect(ids[0]).not.toBe(ids[1]);
    const sent = stack.native.requests.length;
    const never = 'resp_never_issued_by_this_gateway';
    for (const id of ids) {
      const theirs = await create(stack.otherOrgKey, { previous_response_id: id, input: 'And then?' });
      expect(theirs.body.error).toMatchObject({ reason: 'not_found', param: 'previous_response_id' });
      expect(withoutId(theirs, id)).toEqual(withoutId(await create(stack.otherOrgKey, { previous_response_id: never, input: 'And then?' }), never));
    }
    expect(await create(stack.key, { previous_response_id: never, input: 'And then?' })).toMatchObject({ status: 404 });
    expect(stack.native.requests.length).toBe(sent);
    // The org it was relayed to continues from either, the id reaching the backend as sent.
    for (const id of ids) {
      const mine = await create(stack.sameOrgKey, { previous_response_id: id, input: 'And then?' });
      expect(mine.status).toBe(200);
      expect(stack.native.last().previous_response_id).toBe(id);
    }
  });

  it('remembers nothing of a turn the client asked the backend not to store', async () => {
    const unstored = await create(stack.key, { input: 'Hi', store: false });
    expect(unstored.status).toBe(200);
    const sent = stack.native.requests.length;
    expect((await create(stack.key, { previous_response_id: unstored.body.id, input: 'And then?' })).body.error).toMatchObject({ reason: 'not_found' });
    expect(stack.native.requests.length).toBe(sent);
  });
});
