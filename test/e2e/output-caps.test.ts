// Output caps on every protocol, against the real Redis: each cap field a
// backend may read (max_tokens, max_completion_tokens, max_output_tokens) is a
// non-negative integer or the request is refused naming it, and one cap wins:
// the smallest given, reserved for, and sent in every cap field the backend's
// format reads (checked on what the backends recorded).
import { startBackend, type Backend } from '../support/backends';
import { messagesScript, responsesScript, startScriptedBackend, type ScriptedBackend } from '../support/scripted-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, type JsonResponse } from '../support/http';
import { deletePrefix, sharedRedisUrl, uniquePrefix } from '../support/redis';
import { PER_REQUEST_TOKENS, PER_TEXT_TOKENS } from '../../src/request/token-bound';

const messages = [{ role: 'user', content: 'Hi there' }];
// What a hard budget reserves for the prompt "Hi there": its 8 bytes and the template allowances.
const BOUND = 8 + PER_TEXT_TOKENS + PER_REQUEST_TOKENS;
const CAP_FIELDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'];

describe('output caps: every cap field checked, and one cap wins', () => {
  const alice = makeKey('alice', { limits: { tokens: 1_000_000, windowSeconds: 3600 } });
  const prefix = uniquePrefix();
  let chat: Backend;
  let native: ScriptedBackend;
  let gw: TestGateway;

  beforeAll(async () => {
    chat = await startBackend({ format: 'openai' });
    native = await startScriptedBackend();
    native.script('rn-1', responsesScript([], [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello' }] }]));
    native.script('mn-1', messagesScript([], [{ type: 'text', text: 'Hello' }]));
    gw = await startGateway({
      redis: { url: sharedRedisUrl(), prefix },
      keys: [alice.entry],
      upstreams: { chat: { url: chat.base, format: 'openai' }, resp: { url: native.base, apis: ['responses'] }, msg: { url: native.base, apis: ['messages'] } },
      routes: [{ model: 'ok-oa', upstream: 'chat', dialect: 'openai' }, { model: 'ok-*', upstream: 'chat' }, { model: 'rn-*', upstream: 'resp' }, { model: 'mn-*', upstream: 'msg' }],
      plugins: [{ name: 'rate-limit', defaultMaxTokens: 64 }],
    });
  });
  afterAll(async () => {
    await gw?.close();
    await chat?.close();
    await native?.close();
    await deletePrefix(sharedRedisUrl(), prefix);
  });

  const send = (path: string, body: object): Promise<JsonResponse> => post(`${gw.url}${path}`, body, bearer(alice.key));
  /** The cap fields of the last body a backend received. */
  const capsSent = (requests: Array<{ body: any }>): Record<string, unknown> =>
    Object.fromEntries(CAP_FIELDS.filter((f) => requests.at(-1)!.body[f] !== undefined).map((f) => [f, requests.at(-1)!.body[f]]));

  it.each([
    ['chat', '/v1/chat/completions', { model: 'ok-1', messages, max_completion_tokens: '100000' }, 'max_completion_tokens'],
    ['chat, in model_params', '/v1/chat/completions', { model: 'ok-1', messages, model_params: { max_output_tokens: '100000' } }, 'model_params.max_output_tokens'],
    ['Responses', '/v1/responses', { model: 'rn-1', input: 'Hi there', max_completion_tokens: '100000' }, 'max_completion_tokens'],
    ['Responses, translated', '/v1/responses', { model: 'ok-1', input: 'Hi there', max_tokens: '100000' }, 'max_tokens'],
  ])('a cap given as a string is refused with a 400 naming the field: %s', async (_name, path, body, param) => {
    const before = chat.requests.length + native.requests.length;
    const res = await send(path, body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ reason: 'invalid_request', param });
    expect(res.body.error.message).toContain(`${param} must be a number`);
    expect(chat.requests.length + native.requests.length).toBe(before);
  });

  it.each([
    ['a native backend', 'mn-1', 'max_completion_tokens'],
    ['a translated backend', 'ok-1', 'max_output_tokens'],
  ])('a cap given as a string is refused with the Messages error naming the field: %s', async (_name, model, field) => {
    const before = chat.requests.length + native.requests.length;
    const res = await send('/v1/messages', { model, messages, max_tokens: 100, [field]: '100000' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(res.body.error.message).toContain(`${field} must be a number`);
    expect(chat.requests.length + native.requests.length).toBe(before);
  });

  it('chat: max_completion_tokens 1 beside max_tokens 100000 reserves for 1 token and sends 1 in both', async () => {
    const res = await send('/v1/chat/completions', { model: 'ok-1', messages, max_completion_tokens: 1, max_tokens: 100000 });
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-reserved-tokens']).toBe(String(BOUND + 1));
    expect(capsSent(chat.requests)).toEqual({ max_tokens: 1, max_completion_tokens: 1 });
  });

  it('chat on the openai dialect: a cap named only in max_output_tokens is sent as max_tokens too', async () => {
    const res = await send('/v1/chat/completions', { model: 'ok-oa', messages, max_output_tokens: 5 });
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-reserved-tokens']).toBe(String(BOUND + 5));
    expect(capsSent(chat.requests)).toEqual({ max_tokens: 5, max_output_tokens: 5 });
  });

  it('Responses to a chat backend: the smallest cap is the max_tokens it receives, and the only cap', async () => {
    const res = await send('/v1/responses', { model: 'ok-1', input: 'Hi there', max_output_tokens: 100000, max_completion_tokens: 3 });
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-reserved-tokens']).toBe(String(BOUND + 3));
    expect(capsSent(chat.requests)).toEqual({ max_tokens: 3 });
  });

  it('Responses to a native backend: the smallest cap in max_output_tokens and every other cap field sent', async () => {
    const res = await send('/v1/responses', { model: 'rn-1', input: 'Hi there', max_output_tokens: 100000, max_completion_tokens: 7 });
    expect(res.status).toBe(200);
    expect(capsSent(native.requests)).toEqual({ max_output_tokens: 7, max_completion_tokens: 7 });
  });

  it('Responses to a native backend without max_output_tokens: a cap named elsewhere is sent as max_output_tokens too', async () => {
    const res = await send('/v1/responses', { model: 'rn-1', input: 'Hi there', max_completion_tokens: 9 });
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-reserved-tokens']).toBe(String(BOUND + 9));
    expect(capsSent(native.requests)).toEqual({ max_output_tokens: 9, max_completion_tokens: 9 });
  });

  it('Responses without a cap under a hard budget: the cap it is given is in every cap field sent', async () => {
    const res = await send('/v1/responses', { model: 'rn-1', input: 'Hi there', max_tokens: null });
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-reserved-tokens']).toBe(String(BOUND + 64));
    expect(capsSent(native.requests)).toEqual({ max_output_tokens: 64, max_tokens: null });
  });

  it('Messages: max_tokens 100000 beside max_completion_tokens 5 sends 5, natively in both, translated as max_tokens', async () => {
    const body = { messages, max_tokens: 100000, max_completion_tokens: 5 };
    const relayed = await send('/v1/messages', { model: 'mn-1', ...body });
    expect(relayed.status).toBe(200);
    expect(capsSent(native.requests)).toEqual({ max_tokens: 5, max_completion_tokens: 5 });
    const translated = await send('/v1/messages', { model: 'ok-1', ...body });
    expect(translated.status).toBe(200);
    expect(translated.headers['x-ratelimit-reserved-tokens']).toBe(String(BOUND + 5));
    expect(capsSent(chat.requests)).toEqual({ max_tokens: 5 });
  });
});
