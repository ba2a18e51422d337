// POST /v1/responses/{id}/cancel through the gateway: a stream still running
// is stopped from another request, on the same replica or another one sharing
// Redis, and ends with response.incomplete carrying the response as
// cancelled; GET then answers it cancelled. A finished response is answered
// unchanged, and stays so.
import { startFaultBackend, type FaultBackend } from '../support/fault-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, openSse, post } from '../support/http';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { startResponsesBackend, type ResponsesBackend } from '../support/responses-backend';
import { until } from '../support/wait';

// stall-chat: a chat backend that sends two words, then nothing; hold-native: a Responses backend that stops after four events.
const ROUTES: Array<[string, string, string]> = [['translated', 'stall-chat', 'ok-chat'], ['native', 'hold-native', 'ok-native']];

describe('cancelling a response', () => {
  let chat: FaultBackend;
  let native: ResponsesBackend;
  const gateways: TestGateway[] = [];
  const key = makeKey('canceller', { org: 'a' });
  const prefix = uniquePrefix();
  let one: TestGateway;
  let other: TestGateway;

  beforeAll(async () => {
    chat = await startFaultBackend('chat', 0, { kind: 'stall', after: 2 });
    chat.scriptModel('ok-chat', { kind: 'ok' });
    native = await startResponsesBackend();
    const config = {
      redis: { url: sharedRedisUrl(), prefix },
      keys: [key.entry], orgs: { a: {} },
      upstreams: { chat: { url: chat.base, format: 'openai' }, native: { url: native.base, format: 'openai', apis: ['chat', 'responses'] } },
      routes: [{ model: '*-native', upstream: 'native' }, { model: '*', upstream: 'chat' }],
    };
    one = await startGateway(config);
    other = await startGateway(config);
    gateways.push(one, other);
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await chat.close();
    await native.close();
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  const get = (gw: TestGateway, id: string) => call('GET', `${gw.url}/v1/responses/${id}`, undefined, bearer(key.key));
  const cancel = (gw: TestGateway, id: string) => post(`${gw.url}/v1/responses/${id}/cancel`, {}, bearer(key.key));

  describe.each(ROUTES)('on a %s route', (_kind, running, finishing) => {
    it.each([['the same replica', false], ['another replica', true]])('stops a running stream cancelled from %s: it ends with response.incomplete, status cancelled', async (_where, elsewhere) => {
      const abortedBefore = native.aborted();
      const stream = openSse(`${one.url}/v1/responses`, { model: running, input: 'Hi', stream: true }, bearer(key.key));
      const { id } = JSON.parse((await stream.next('response.in_progress')).data).response;
      expect((await get(one, id)).body.status).toBe('in_progress');

      const answer = await cancel(elsewhere ? other : one, id);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ id, object: 'response', status: 'cancelled' });

      const { events } = await stream.done;
      const last = events.at(-1)!;
      expect(last.event).toBe('response.incomplete');
      const ended = JSON.parse(last.data);
      expect(ended.response).toMatchObject({ id, status: 'cancelled' });
      // Translated, the answer is cancelled as it stands: the text streamed so far, its message incomplete.
      if (running === 'stall-chat') expect(ended.response.output).toEqual([expect.objectContaining({ type: 'message', status: 'incomplete', content: [expect.objectContaining({ text: expect.stringMatching(/\S/) })] })]);
      expect(ended.sequence_number).toBe(JSON.parse(events.at(-2)!.data).sequence_number + 1);
      for (const gw of [one, other]) expect((await get(gw, id)).body).toMatchObject({ id, status: 'cancelled' });
      // The backend is let go.
      if (running === 'hold-native') await until(() => native.aborted() === abortedBefore + 1, 'the backend\'s stream to be closed');
    });

    it('answers a cancel of a finished response with it unchanged', async () => {
      const created = await post(`${one.url}/v1/responses`, { model: finishing, input: 'Hi' }, bearer(key.key));
      expect(created.body.status).toBe('completed');
      expect((await cancel(other, created.body.id)).body).toEqual(created.body);
      expect((await get(one, created.body.id)).body).toEqual(created.body);
    });
  });
});
