// Stored responses belong to the org whose key stored them: a key of another
// org gets 404 not_found for the id on every endpoint that reads it (GET,
// DELETE, input_items, cancel) and as previous_response_id, exactly the
// answer for an id that never existed, and nothing of it changes; a second
// key of the owning org reads it.
import { bearer, call, post, type JsonResponse } from '../support/http';
import { RESPONSES_ROUTES, startResponsesStack, type ResponsesStack } from '../support/responses-stack';

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

  /** The error with the id taken out, to compare the answers for two ids. */
  const withoutId = (res: JsonResponse, id: string) => ({ status: res.status, error: { ...res.body.error, message: res.body.error.message.replace(id, '<id>') } });

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
