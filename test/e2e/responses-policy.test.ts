// The gateway's one policy over POST /v1/responses, as over chat: the content
// filter reads every text the request forwards, token reservations count
// max_output_tokens, in-flight limits admit it, metrics and the access log
// name its protocol, fleets and fallbacks carry it past a dead backend before
// the first byte, errors are OpenAI's error object with the catalogue's
// reason, and a stream that breaks after it started ends with an `error`
// event and `response.failed`; on a translated and on a native route.
import pino from 'pino';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, openSse, post, postSse } from '../support/http';
import { parseExposition, series } from '../support/metrics';
import { freePort } from '../support/net';
import { BLOCKED_TERM } from '../support/responses-stack';
import { startResponsesBackend, type ResponsesBackend } from '../support/responses-backend';
import { until } from '../support/wait';

const ROUTES: Array<[string, string]> = [['translated', 'chat'], ['native', 'native']];

describe('policy over the Responses API', () => {
  let chat: Backend;
  let native: ResponsesBackend;
  let gw: TestGateway;
  const lines: any[] = [];
  const alice = makeKey('alice', { org: 'acme', limits: { tokens: 1_000_000 } });
  const single = makeKey('single', { org: 'acme', limits: { concurrency: 1 } });

  beforeAll(async () => {
    chat = await startBackend({ format: 'openai', events: 3, gapMs: 5 });
    native = await startResponsesBackend();
    const dead = `http://127.0.0.1:${await freePort()}/v1`;
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    gw = await startGateway({
      keys: [alice.entry, single.entry],
      orgs: { acme: {} },
      admission: { queueTimeoutMs: 0 },
      upstreams: {
        chat: { url: chat.base, format: 'openai' },
        native: { url: native.base, format: 'openai', apis: ['chat', 'responses'] },
        // A fleet whose first endpoint is down: each request is retried on the other.
        'chat-fleet': { endpoints: [{ url: dead }, { url: chat.base }], picker: 'round_robin', format: 'openai' },
        'native-fleet': { endpoints: [{ url: dead }, { url: native.base }], picker: 'round_robin', format: 'openai', apis: ['chat', 'responses'] },
        dead: { url: dead, format: 'openai', apis: ['chat', 'responses'] },
      },
      routes: [
        { model: 'fleet-chat', upstream: 'chat-fleet', upstreamModel: 'ok-fleet' },
        { model: 'metered', upstream: 'chat', upstreamModel: 'ok-metered' },
        { model: 'fleet-native', upstream: 'native-fleet' },
        { model: 'gone-chat', upstream: 'dead', fallbacks: ['ok-fallback'] },
        { model: 'gone-native', upstream: 'dead', fallbacks: ['native-fallback'] },
        { model: 'native-*', upstream: 'native' },
        { model: '*-native', upstream: 'native' },
        { model: '*', upstream: 'chat' },
      ],
      plugins: [{ name: 'content-filter', terms: [BLOCKED_TERM] }, { name: 'rate-limit' }, { name: 'metrics' }],
    }, { logger });
  });
  afterAll(async () => { await gw.close(); await chat.close(); await native.close(); });

  const create = (body: Record<string, unknown>, key = alice.key) => post(`${gw.url}/v1/responses`, body, bearer(key));
  const stream = (body: Record<string, unknown>) => postSse(`${gw.url}/v1/responses`, { ...body, stream: true }, bearer(alice.key));
  const modelOf = (route: string) => (route === 'native' ? 'ok-native' : 'ok-chat');

  describe.each(ROUTES)('on a %s route', (_kind, route) => {
    const model = modelOf(route);
    const blocked = `Please use the ${BLOCKED_TERM} now.`;

    it.each([
      ['a function_call_output', { input: [
        { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: blocked },
      ] }],
      ['the instructions', { instructions: blocked, input: 'Hi' }],
      ['a tool description', { input: 'Hi', tools: [{ type: 'function', name: 'lookup', description: blocked, parameters: { type: 'object', properties: {} } }] }],
    ])('refuses a blocked term in %s with 400 content_filter, before any backend sees it', async (_where, body) => {
      const before = chat.requests.length + native.requests.length;
      const res = await create({ model, ...body });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ reason: 'content_filter', code: 'content_filter', type: 'invalid_request_error', status: 400 });
      expect(chat.requests.length + native.requests.length).toBe(before);
    });

    it('reserves the prompt estimate plus max_output_tokens from the token budget', async () => {
      const reserved = async (max: number) => {
        const res = await create({ model, input: 'Hi', max_output_tokens: max });
        expect(res.status).toBe(200);
        return Number(res.headers['x-ratelimit-reserved-tokens']);
      };
      const small = await reserved(100);
      expect(await reserved(5_000) - small).toBe(4_900);
      expect(small).toBeGreaterThan(100);
    });

    it('ends a stream that breaks after it started with an error event, then response.failed', async () => {
      const res = await stream({ model: route === 'native' ? 'break-native' : 'break-chat', input: 'Hi' });
      expect(res.status).toBe(200);
      const types = res.events.map((e) => e.event);
      expect(types[0]).toBe('response.created');
      expect(types.slice(-2)).toEqual(['error', 'response.failed']);
      const [error, failed] = res.events.slice(-2).map((e) => JSON.parse(e.data));
      expect(error).toMatchObject({ type: 'error', code: expect.any(String), message: expect.any(String) });
      // The response as it stood, failed: the one response.created announced.
      const { response: started } = JSON.parse(res.events[0].data);
      expect(failed.response).toMatchObject({ id: started.id, object: 'response', model: started.model, status: 'failed', error: { code: error.code } });
      expect(failed.sequence_number).toBe(error.sequence_number + 1);
      expect(res.raw).not.toContain('[DONE]');
    });

    it('carries a request past a dead endpoint of a fleet, and to a fallback model, before the first byte', async () => {
      // The answer names the model that answered: the fallback's own id.
      for (const [asked, answered] of [[`fleet-${route}`, `fleet-${route}`], [`gone-${route}`, route === 'native' ? 'native-fallback' : 'ok-fallback']]) {
        const json = await create({ model: asked, input: 'Hi' });
        expect({ asked, status: json.status, model: json.body.model, text: json.body.output?.[0]?.content?.[0]?.text }).toEqual({ asked, status: 200, model: answered, text: expect.any(String) });
        const streamed = await stream({ model: asked, input: 'Hi' });
        expect(streamed.events.at(-1)!.event).toBe('response.completed');
        expect(JSON.parse(streamed.events.at(-1)!.data).response.model).toBe(answered);
      }
    });
  });

  it('admits /v1/responses under the in-flight limits: a second request of a key at its concurrency is refused', async () => {
    const held = openSse(`${gw.url}/v1/responses`, { model: 'hold-native', input: 'Hi', stream: true }, bearer(single.key));
    try {
      await held.next('response.created');
      const second = await create({ model: 'ok-chat', input: 'Hi' }, single.key);
      expect(second.status).toBe(429);
      expect(second.body.error).toMatchObject({ reason: 'rate_limited', status: 429 });
      // The key has no budget: only its in-flight limit refuses.
      expect(second.headers['retry-after']).toBe('1');
    } finally {
      held.close();
    }
    // Its slot comes back when it ends.
    await until(async () => (await create({ model: 'ok-chat', input: 'Hi' }, single.key)).status === 200, 'the slot to come back');
  });

  it('answers an error before the stream in OpenAI\'s error object with the catalogue\'s reason', async () => {
    const res = await create({ model: 'status-500', input: 'Hi' });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ error: expect.objectContaining({ message: expect.any(String), reason: expect.any(String), status: 502, type: expect.any(String), code: expect.any(String) }) });
    const invalid = await create({ model: 'ok-chat', input: [{ type: 'function_call_output', output: 'x' }] });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatchObject({ reason: 'invalid_request', param: 'input[0].call_id', type: 'invalid_request_error' });
  });

  it('counts requests under protocol="responses" and writes "protocol":"responses" in the access log', async () => {
    const res = await create({ model: 'metered', input: 'Hi' }, alice.key);
    expect(res.status).toBe(200);
    const requestId = res.headers['x-request-id'];
    await until(() => lines.some((l) => l.msg === 'request' && l.requestId === requestId), 'the access line');
    expect(lines.find((l) => l.msg === 'request' && l.requestId === requestId)).toMatchObject({ protocol: 'responses', model: 'metered', status: 200, endpoint: 'chat' });
    const samples = parseExposition(await gw.gateway.services.metrics!.metrics());
    expect(series(samples, 'sluice_requests_total')).toMatchObject({ 'endpoint=chat,model=metered,protocol=responses,reason=,status=200,version=v1': 1 });
    expect(series(samples, 'sluice_request_duration_seconds_count')).toMatchObject({ 'endpoint=chat,model=metered,protocol=responses,stream=false': 1 });
  });
});
