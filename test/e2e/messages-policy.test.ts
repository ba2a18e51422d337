// The gateway's policy over the Messages API, on a translated and a native
// backend: the key as x-api-key or Authorization: Bearer; the content filter
// over system, every text block, tool definitions, tool inputs and tool
// results; token reservations from max_tokens; the protocol label on the
// metrics and in the access line, a refusal's reason in both; in-flight
// limits and their wait queue; retries and fallbacks as for chat. Every
// refusal comes in Anthropic's error shape.
import pino from 'pino';
import { queued } from '../support/admission';
import { AGENT_MODEL } from '../support/agent-backend';
import { PLAIN_ANSWER } from '../support/agent-script';
import { startGatedBackend, type GatedBackend } from '../support/gated-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post, postSse, type JsonResponse } from '../support/http';
import { parseExposition, scrape, series } from '../support/metrics';
import { MODES, NATIVE, TRANSLATED, startMessagesStack, type MessagesStack } from '../support/messages-stack';
import { freePort } from '../support/net';
import { until } from '../support/wait';

const FORBIDDEN = 'forbidden phrase';
const hi = [{ role: 'user', content: 'Hi' }];
const tool = (description: string) => ({ name: 'lookup', description, input_schema: { type: 'object', properties: { q: { type: 'string', description: 'what to look up' } } } });
const use = (input: Record<string, unknown>) => ({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input }] });
const result = (content: unknown) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] });

/** Where a Messages request can carry text the filter must read. */
const SMUGGLED: Record<string, Record<string, unknown>> = {
  'system (a string)': { system: `Always mention the ${FORBIDDEN}.` },
  'system (text blocks)': { system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: `Say the ${FORBIDDEN}.` }] },
  'a system message between turns': { messages: [...hi, { role: 'assistant', content: 'Hello' }, { role: 'system', content: `the ${FORBIDDEN}` }, ...hi] },
  'a text block after an image': { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://images.example/a.png' } }, { type: 'text', text: `the ${FORBIDDEN}` }] }] },
  'a tool description': { tools: [tool(`Finds the ${FORBIDDEN}`)] },
  'a tool input': { tools: [tool('Finds things')], messages: [...hi, use({ q: FORBIDDEN }), result('nothing')] },
  'a tool result (a string)': { tools: [tool('Finds things')], messages: [...hi, use({ q: 'x' }), result(`the ${FORBIDDEN}`)] },
  'a tool result (text blocks)': { tools: [tool('Finds things')], messages: [...hi, use({ q: 'x' }), result([{ type: 'text', text: `the ${FORBIDDEN}` }])] },
  'an assistant\'s earlier thinking': { messages: [...hi, { role: 'assistant', content: [{ type: 'thinking', thinking: `the ${FORBIDDEN}`, signature: 's' }, { type: 'text', text: 'Hello' }] }, ...hi] },
};

/** Anthropic's error object, with the gateway's reason as details.error_code and the request id twice. */
function expectMessagesError(res: JsonResponse, status: number, type: string, reason: string): void {
  expect({ status: res.status, type: res.body?.error?.type, reason: res.body?.error?.details?.error_code }).toEqual({ status, type, reason });
  expect(Object.keys(res.body)).toEqual(['type', 'error', 'request_id']);
  expect(res.body.type).toBe('error');
  expect(res.body.error.message.length).toBeGreaterThan(10);
  expect(res.body.request_id).toBe(res.headers['request-id']);
  expect(res.headers['x-request-id']).toBe(res.headers['request-id']);
}

describe('policy over the Messages API', () => {
  let stack: MessagesStack;
  const lines: string[] = [];
  // A token budget per backend kind, so each test starts from a full one.
  const budgets = Object.fromEntries(MODES.map(([, model]) => [model, makeKey(`budget-${model}`, { limits: { tokens: 1000, windowSeconds: 60 } })]));
  const messages = (body: Record<string, unknown>, headers: Record<string, string> = { 'x-api-key': stack.key }) =>
    post(`${stack.gw.url}/v1/messages`, { max_tokens: 64, messages: hi, ...body }, headers);

  beforeAll(async () => {
    const dead = `http://127.0.0.1:${await freePort()}/v1`;
    stack = await startMessagesStack({ command: 'true' }, {
      config: (backend) => ({
        keys: Object.values(budgets).map((k) => k.entry),
        upstreams: {
          dead: { url: dead, retry: { attempts: 0 } },
          // A fleet whose first endpoint is down: round robin tries it first, and the retry takes the other.
          pair: { endpoints: [{ url: dead }, { url: backend.base }], picker: 'round_robin', apis: ['chat', 'messages'], retry: { attempts: 1, backoffMs: 0 } },
        },
        routes: [
          { model: 'down-translated', upstream: 'dead', fallbacks: [TRANSLATED] },
          { model: 'down-native', upstream: 'dead', fallbacks: [NATIVE] },
          { model: 'retried', upstream: 'pair', upstreamModel: AGENT_MODEL },
        ],
        plugins: [{ name: 'content-filter', terms: [FORBIDDEN] }, { name: 'rate-limit' }, { name: 'metrics' }],
      }),
      gateway: { metrics: {}, logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }) },
    });
  });
  afterAll(() => stack?.close());

  describe('keys', () => {
    it('takes the key as x-api-key or as Authorization: Bearer', async () => {
      expect((await messages({ model: TRANSLATED }, { 'x-api-key': stack.key })).status).toBe(200);
      expect((await messages({ model: TRANSLATED }, bearer(stack.key))).status).toBe(200);
    });

    it.each([
      ['no key at all', {}],
      ['a wrong x-api-key', { 'x-api-key': 'sk-not-a-key' }],
      ['a wrong bearer key', bearer('sk-not-a-key')],
    ])('refuses %s with 401 authentication_error in Anthropic\'s shape', async (_what, headers) => {
      const res = await messages({ model: TRANSLATED }, headers as Record<string, string>);
      expectMessagesError(res, 401, 'authentication_error', 'unauthorized');
    });

    it('tells a client without a key both ways to send it', async () => {
      const res = await messages({ model: TRANSLATED }, {});
      expect(res.body.error.message).toContain('x-api-key');
      expect(res.body.error.message).toContain('Authorization: Bearer');
    });
  });

  it('answers a wrong method or an unknown path under /v1/messages in Anthropic\'s shape too', async () => {
    const get = await call('GET', `${stack.gw.url}/v1/messages`, undefined, { 'x-api-key': stack.key });
    expectMessagesError(get, 405, 'invalid_request_error', 'method_not_allowed');
    expect(get.headers.allow).toBe('POST');
    const unknown = await post(`${stack.gw.url}/v1/messages/batches`, { requests: [] }, { 'x-api-key': stack.key });
    expectMessagesError(unknown, 404, 'not_found_error', 'not_found');
  });

  describe.each(MODES)('content filter, %s backend', (_mode, model) => {
    it.each(Object.keys(SMUGGLED))('refuses the term in %s with 400 content_filter, before the backend', async (where) => {
      const before = stack.backend.requests.length;
      const res = await messages({ model, ...SMUGGLED[where] });
      expectMessagesError(res, 400, 'invalid_request_error', 'content_filter');
      expect(res.body.error.details.param).toBe('prompt');
      expect(stack.backend.requests.length).toBe(before);
    });
  });

  it.each(MODES)('reserves tokens from max_tokens (%s backend)', async (_mode, model) => {
    // A hard budget reserves "Hi" at its bound, 42 tokens (2 bytes and the template allowances): max_tokens
    // 2000 does not fit in 1000, max_tokens 100 reserves 142.
    const key = { 'x-api-key': budgets[model].key };
    const big = await messages({ model, max_tokens: 2000 }, key);
    expectMessagesError(big, 429, 'rate_limit_error', 'rate_limited');
    expect(big.body.error.message).toMatch(/has 1000 left, fewer than the 2042 this request may use/);
    expect(Number(big.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const small = await messages({ model, max_tokens: 100 }, key);
    expect(small.status).toBe(200);
    expect(small.headers['x-ratelimit-remaining-tokens']).toBe(String(1000 - 142));
  });

  it.each(MODES)('counts the request under protocol="messages" and writes its access line (%s backend)', async (_mode, model) => {
    const res = await messages({ model }, { 'x-api-key': stack.key, 'x-request-id': `access-${model}` });
    expect(res.status).toBe(200);
    await until(() => lines.some((l) => l.includes(`"requestId":"access-${model}"`)), 'the access line');
    const line = JSON.parse(lines.find((l) => l.includes(`"requestId":"access-${model}"`))!);
    expect(line).toMatchObject({ msg: 'request', protocol: 'messages', endpoint: 'chat', model, upstream: model === NATIVE ? 'messages' : 'chat', status: 200, stream: false, tokens: { estimated: false } });
    const samples = parseExposition((await scrape(stack.gw.metrics!.url)).text);
    const requests = series(samples, 'sluice_requests_total');
    expect(requests[`endpoint=chat,model=${model},protocol=messages,reason=,status=200,version=v1`]).toBeGreaterThanOrEqual(1);
    expect(Object.keys(requests).filter((k) => k.includes('protocol=chat'))).toEqual([]);
  });

  it.each(MODES)('keeps a refusal\'s reason in the access line and the reason label (%s backend)', async (_mode, model) => {
    const id = `refused-${model}`;
    const res = await messages({ model, system: `Say the ${FORBIDDEN}.` }, { 'x-api-key': stack.key, 'x-request-id': id });
    expectMessagesError(res, 400, 'invalid_request_error', 'content_filter');
    await until(() => lines.some((l) => l.includes(`"requestId":"${id}"`)), 'the access line');
    const line = JSON.parse(lines.find((l) => l.includes(`"requestId":"${id}"`))!);
    expect(line).toMatchObject({ msg: 'request', protocol: 'messages', model, status: 400, reason: 'content_filter' });
    const requests = series(parseExposition((await scrape(stack.gw.metrics!.url)).text), 'sluice_requests_total');
    expect(requests[`endpoint=chat,model=${model},protocol=messages,reason=content_filter,status=400,version=v1`]).toBeGreaterThanOrEqual(1);
  });

  it.each(MODES)('answers through a fallback when the route\'s backend is down (%s backend)', async (mode, model) => {
    const res = await messages({ model: `down-${mode}` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 'message', model, content: [{ type: 'text', text: PLAIN_ANSWER }] });
  });

  it('retries on the fleet\'s other endpoint when the first is down', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await messages({ model: 'retried' }, { 'x-api-key': stack.key, 'x-request-id': `retried-${i}` });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ type: 'message', model: 'retried', content: [{ type: 'text', text: PLAIN_ANSWER }] });
    }
    const attempts = async () => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && String(l.requestId).startsWith('retried-')).map((l) => l.attempts).sort();
    await until(async () => (await attempts()).length === 2, 'both access lines');
    // Round robin put the dead endpoint first at least once: that request took a second attempt.
    expect(await attempts()).toContain(2);
  });
});

// The in-flight limit of a key and its wait queue, on a translated route to a
// backend that holds each stream open until the test lets it go.
describe('in-flight limits over the Messages API', () => {
  const LIMIT = 2;
  const EXTRA = 3;
  let backend: GatedBackend;
  const open: TestGateway[] = [];
  const limited = makeKey('limited', { limits: { concurrency: LIMIT } });

  beforeAll(async () => { backend = await startGatedBackend({ events: 3, gapMs: 5 }); });
  afterAll(async () => {
    backend.release();
    await Promise.all(open.map((g) => g.close()));
    await backend.close();
  });

  async function gateway(queueTimeoutMs: number): Promise<TestGateway> {
    const gw = await startGateway({
      keys: [limited.entry],
      admission: { queueTimeoutMs },
      upstreams: { chat: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'chat' }],
    });
    open.push(gw);
    return gw;
  }

  /** A streamed Messages request of the limited key, under an id the backend groups by (`group:n`). */
  const stream = (gw: TestGateway, id: string) => postSse(`${gw.url}/v1/messages`,
    { model: 'hold-messages', max_tokens: 16, stream: true, messages: hi }, { 'x-api-key': limited.key, 'x-request-id': id });
  const arrived = (group: string) => backend.seen.filter((id) => id.startsWith(`${group}:`)).length;

  it(`lets ${LIMIT} of ${LIMIT + EXTRA} concurrent streams reach the backend at once; the rest wait their turn, and all complete`, async () => {
    const gw = await gateway(10_000);
    const runs = Array.from({ length: LIMIT + EXTRA }, (_, i) => stream(gw, `wait:${i}`));
    await backend.waitForOpen(LIMIT, 'wait');
    await until(async () => (await queued(gw)) === EXTRA, `${EXTRA} requests in the queue`);
    expect(arrived('wait')).toBe(LIMIT);
    // Each held stream let go frees its slot for the next in the queue, until every one has run.
    for (let released = 0; released < LIMIT + EXTRA;) {
      await until(() => backend.holding > 0, 'a stream held at the backend');
      expect(backend.open('wait')).toBeLessThanOrEqual(LIMIT);
      released += backend.holding;
      backend.release();
    }
    for (const run of runs) {
      const res = await run;
      expect(res.status).toBe(200);
      expect(res.events.at(-1)!.event).toBe('message_stop');
    }
    expect(arrived('wait')).toBe(LIMIT + EXTRA);
    expect(backend.max.get('wait')).toBe(LIMIT);
    expect(await queued(gw)).toBe(0);
  });

  it('answers a request whose wait runs out 429 rate_limited in Anthropic\'s shape, never sending it', async () => {
    const gw = await gateway(200);
    const held = Array.from({ length: LIMIT }, (_, i) => stream(gw, `timeout:${i}`));
    await backend.waitForOpen(LIMIT, 'timeout');
    const res = await post(`${gw.url}/v1/messages`, { model: 'hold-messages', max_tokens: 16, stream: true, messages: hi }, { 'x-api-key': limited.key, 'x-request-id': 'timeout:late' });
    expectMessagesError(res, 429, 'rate_limit_error', 'rate_limited');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(backend.seen).not.toContain('timeout:late');
    backend.release();
    for (const run of held) expect((await run).status).toBe(200);
  });
});
