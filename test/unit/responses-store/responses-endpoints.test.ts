// The stored-response endpoints and previous_response_id on the memory
// store: what each answers, the 404 (never 403) for an id the caller's owner
// did not store, and cancel of a running response, an ended one and one whose
// process is gone.
import { GatewayError } from '../../../src/contract/errors';
import { MemoryResponseStore } from '../../../src/responses-store/memory-store';
import { cancelResponse, deleteResponse, getResponse, listInputItems } from '../../../src/responses-store/endpoints';
import { continueFrom } from '../../../src/responses-store/resolve';
import { RunningResponses } from '../../../src/responses-store/running';
import type { ResponseStore } from '../../../src/responses-store/store';
import { storedRecord, storeLimits } from '../../support/responses-state';

const A = 'org:a';
const B = 'org:b';

async function refusal(promise: Promise<unknown>): Promise<{ reason: string; status: number; param: string | null; message: string }> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(GatewayError);
  const { reason, status, param, message } = err as GatewayError;
  return { reason, status, param, message };
}

function setUp() {
  const store = new MemoryResponseStore(storeLimits({ maxBytes: 8 << 20 }), { sweepMs: 0 });
  const running = new RunningResponses();
  return { store, running, state: { store, running } };
}

describe('the stored-response endpoints', () => {
  it('GET answers the response as stored; DELETE answers OpenAI\'s deleted object and it is gone', async () => {
    const { store } = setUp();
    const record = storedRecord('resp_1', A, 'hello');
    await store.put('resp_1', record);
    expect(await getResponse(store, A, 'resp_1', {})).toEqual(record.response);
    expect(await deleteResponse(store, A, 'resp_1')).toEqual({ id: 'resp_1', object: 'response.deleted', deleted: true });
    expect(await refusal(getResponse(store, A, 'resp_1'))).toMatchObject({ reason: 'not_found', status: 404 });
    expect(await refusal(deleteResponse(store, A, 'resp_1'))).toMatchObject({ reason: 'not_found', status: 404 });
  });

  it('lists the input items with the query\'s order, limit and cursor, and refuses a bad query', async () => {
    const { store } = setUp();
    const record = storedRecord('resp_1', A, 'hi');
    record.input.push({ ...record.input[0], id: 'msg_second' });
    await store.put('resp_1', record);
    const page = await listInputItems(store, A, 'resp_1', { order: 'asc', limit: '1' });
    expect(page).toMatchObject({ object: 'list', data: [{ id: record.input[0].id }], has_more: true });
    expect(await listInputItems(store, A, 'resp_1', { after: record.input[0].id, order: 'asc' })).toMatchObject({ data: [{ id: 'msg_second' }], has_more: false });
    expect(await refusal(listInputItems(store, A, 'resp_1', { limit: '0' }))).toMatchObject({ reason: 'invalid_request', param: 'limit' });
  });

  it('continues from the stored history, and refuses a response still running', async () => {
    const { store } = setUp();
    const record = storedRecord('resp_1', A, 'first');
    await store.put('resp_1', record);
    expect(await continueFrom(store, A, 'resp_1')).toEqual(record.history);
    await store.put('resp_2', storedRecord('resp_2', A, 'second', 'in_progress'));
    expect(await refusal(continueFrom(store, A, 'resp_2'))).toMatchObject({ reason: 'invalid_request', status: 400, param: 'previous_response_id' });
  });

  it('refuses GET with stream=true: there are no events to replay', async () => {
    const { store } = setUp();
    await store.put('resp_1', storedRecord('resp_1', A, 'x'));
    expect(await refusal(getResponse(store, A, 'resp_1', { stream: 'true' }))).toMatchObject({ reason: 'invalid_request', param: 'stream' });
  });

  // Another owner's id, one that never existed and one that cannot be an id all answer alike.
  const calls: Array<[string, string, (s: ReturnType<typeof setUp>, owner: string, id: string) => Promise<unknown>]> = [
    ['GET', 'response_id', (s, owner, id) => getResponse(s.store, owner, id)],
    ['DELETE', 'response_id', (s, owner, id) => deleteResponse(s.store, owner, id)],
    ['input_items', 'response_id', (s, owner, id) => listInputItems(s.store, owner, id, {})],
    ['cancel', 'response_id', (s, owner, id) => cancelResponse(s.state, owner, id)],
    ['previous_response_id', 'previous_response_id', (s, owner, id) => continueFrom(s.store, owner, id)],
  ];
  describe.each(calls)('%s', (_name, param, call) => {
    it.each([
      ['another org\'s response', B, 'resp_1'],
      ['an id never stored', A, 'resp_none'],
      ['a string that is no id', A, 'resp_1/../x'.repeat(40)],
    ])('answers 404 not_found for %s, as for each other', async (_what, owner, id) => {
      const s = setUp();
      await s.store.put('resp_1', storedRecord('resp_1', A, 'private', 'in_progress'));
      const cancelled = jest.fn();
      s.running.add('resp_1', { cancel: cancelled });
      const refused = await refusal(call(s, owner, id));
      expect(refused).toMatchObject({ reason: 'not_found', status: 404, param });
      expect(refused.message).not.toContain('/..');
      expect(cancelled).not.toHaveBeenCalled();
      // Still there, untouched, for its owner.
      expect((await s.store.get('resp_1', A))?.response.status).toBe('in_progress');
    });
  });
});

describe('cancelResponse', () => {
  it('stops a response running here and answers it as it ended', async () => {
    const { store, running, state } = setUp();
    await store.put('resp_1', storedRecord('resp_1', A, 'long', 'in_progress'));
    const cancel = jest.fn(() => {
      // What the request running it does: end with what it has, store it, leave the registry.
      setImmediate(() => void store.put('resp_1', storedRecord('resp_1', A, 'long', 'cancelled')).then(() => running.remove('resp_1')));
    });
    running.add('resp_1', { cancel });
    const answer = await cancelResponse(state, A, 'resp_1');
    expect(answer.status).toBe('cancelled');
    expect(answer.output).toHaveLength(1);
    expect(cancel).toHaveBeenCalledTimes(1);
    expect(running.size).toBe(0);
  });

  it('answers an ended response as stored, and stops nothing', async () => {
    const { store, running, state } = setUp();
    const record = storedRecord('resp_1', A, 'done');
    await store.put('resp_1', record);
    const cancel = jest.fn();
    running.add('resp_1', { cancel });
    expect(await cancelResponse(state, A, 'resp_1')).toEqual(record.response);
    expect(cancel).not.toHaveBeenCalled();
  });

  it('marks cancelled a response whose process is gone (nothing ends it)', async () => {
    const { store, state } = setUp();
    await store.put('resp_1', storedRecord('resp_1', A, 'orphan', 'in_progress'));
    expect((await cancelResponse(state, A, 'resp_1', { waitMs: 50 })).status).toBe('cancelled');
    expect((await store.get('resp_1', A))?.response.status).toBe('cancelled');
  });

  it('says 503 store_unavailable, not 404, when the store cannot answer', async () => {
    const broken: ResponseStore = {
      put: async () => { throw new GatewayError('store_unavailable', 'down'); },
      get: async () => { throw new GatewayError('store_unavailable', 'down'); },
      delete: async () => { throw new GatewayError('store_unavailable', 'down'); },
      remember: async () => { throw new GatewayError('store_unavailable', 'down'); },
      owns: async () => { throw new GatewayError('store_unavailable', 'down'); },
      close: async () => undefined,
    };
    expect(await refusal(cancelResponse({ store: broken, running: new RunningResponses() }, A, 'resp_1'))).toMatchObject({ reason: 'store_unavailable', status: 503 });
    expect(await refusal(continueFrom(broken, A, 'resp_1'))).toMatchObject({ reason: 'store_unavailable', status: 503 });
  });
});
