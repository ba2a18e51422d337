// Every kind of error the gateway can give a Messages client, as Anthropic's
// SDK reads it: its own error class for the status, `type` from the body,
// `errorCode` (details.error_code) carrying the gateway's reason, `requestID`
// from request-id; Retry-After where a wait helps; 529 overloaded_error,
// which the SDK retries on its own; and a failure after a stream started, as
// the `error` event the SDK raises.
import type { ServerResponse } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { messagesAnswer } from '../../support/agent-messages';
import { sseFrame } from '../../support/agent-script';
import { startBackend, type Backend } from '../../support/backends';
import { makeKey, startGateway, type TestGateway } from '../../support/gateway';
import { startJsonServer, type JsonServer } from '../../support/json-server';
import { freePort } from '../../support/net';

const hi: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hi' }];

type APIError = InstanceType<typeof Anthropic.APIError>;

async function failure<T extends APIError>(promise: Promise<unknown>, type: new (...args: any[]) => T): Promise<T> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(type);
  return err as T;
}

/** A native Messages backend whose streams fail part way: `*-cut` drops the connection, any other model sends Anthropic's error event. */
function nativeFailures(): Promise<JsonServer> {
  return startJsonServer((_req, res: ServerResponse, body) => {
    const { frames } = messagesAnswer(body, { kind: 'answer', text: 'The first words of an answer' }, 1);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const head = frames.slice(0, 4).join('');
    if (String(body.model).endsWith('-cut')) return void res.write(head, () => res.socket?.destroy());
    res.end(head + sseFrame({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error'));
  });
}

describe('@anthropic-ai/sdk errors through the gateway', () => {
  let backend: Backend;
  let native: JsonServer;
  let flaky: JsonServer;
  let gw: TestGateway;
  let client: Anthropic;
  const all = makeKey('all');
  const limited = makeKey('limited', { models: ['ok-a'] });
  const small = makeKey('small', { limits: { tokens: 500, windowSeconds: 60 } });
  let flakyAnswers = 0;

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 3, gapMs: 5 });
    native = await nativeFailures();
    // Unavailable for its first two requests (a 503 with Retry-After: 1), then answers.
    flaky = await startJsonServer((_req, res) => {
      const down = flakyAnswers++ < 2;
      const text = down ? '{"error":{"message":"loading"}}'
        : JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'lone-a', choices: [{ index: 0, message: { role: 'assistant', content: 'back' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });
      res.writeHead(down ? 503 : 200, { 'content-type': 'application/json', ...(down ? { 'retry-after': '1' } : {}) });
      res.end(text);
    });
    gw = await startGateway({
      keys: [all.entry, limited.entry, small.entry],
      upstreams: {
        b: { url: backend.base, format: 'openai' },
        native: { url: native.base, apis: ['messages'] },
        dead: { url: `http://127.0.0.1:${await freePort()}/v1`, retry: { attempts: 0 } },
        lone: { url: flaky.base, retry: { attempts: 0 }, health: { consecutiveFailures: 1, baseEjectionMs: 700 } },
      },
      routes: [
        { model: 'native-*', upstream: 'native' },
        { model: 'dead-*', upstream: 'dead' },
        { model: 'lone-*', upstream: 'lone' },
        ...['ok-*', 'status-*', 'break-*', 'fail-*'].map((model) => ({ model, upstream: 'b' })),
      ],
      plugins: [{ name: 'rate-limit' }],
    });
    client = new Anthropic({ baseURL: gw.url, apiKey: all.key, maxRetries: 0, timeout: 5_000 });
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([backend?.close(), native?.close(), flaky?.close()]);
  });

  it('400: a request without max_tokens is a BadRequestError that names the field', async () => {
    const err = await failure(client.messages.create({ model: 'ok-a', messages: hi } as unknown as Anthropic.MessageCreateParamsNonStreaming), Anthropic.BadRequestError);
    expect({ status: err.status, type: err.type, errorCode: err.errorCode, param: (err.details as { param?: string } | null)?.param }).toEqual({ status: 400, type: 'invalid_request_error', errorCode: 'invalid_request', param: 'max_tokens' });
    expect(err.message).toContain('max_tokens');
    expect(err.requestID).toMatch(/./);
    expect(err.requestID).toBe(err.headers.get('x-request-id'));
  });

  it('400: a backend\'s own refusal is a BadRequestError with its message', async () => {
    const err = await failure(client.messages.create({ model: 'status-400', max_tokens: 16, messages: hi }), Anthropic.BadRequestError);
    expect({ type: err.type, errorCode: err.errorCode }).toEqual({ type: 'invalid_request_error', errorCode: 'upstream_rejected' });
    expect(err.message).toContain('backend says no (400)');
  });

  it('401: a wrong key is an AuthenticationError', async () => {
    const stranger = new Anthropic({ baseURL: gw.url, apiKey: 'sk-wrong-key', maxRetries: 0 });
    const err = await failure(stranger.messages.create({ model: 'ok-a', max_tokens: 16, messages: hi }), Anthropic.AuthenticationError);
    expect({ status: err.status, type: err.type, errorCode: err.errorCode }).toEqual({ status: 401, type: 'authentication_error', errorCode: 'unauthorized' });
  });

  it('403: a model outside the key\'s allow-list is a PermissionDeniedError', async () => {
    const narrow = new Anthropic({ baseURL: gw.url, apiKey: limited.key, maxRetries: 0 });
    const err = await failure(narrow.messages.create({ model: 'ok-b', max_tokens: 16, messages: hi }), Anthropic.PermissionDeniedError);
    expect({ status: err.status, type: err.type, errorCode: err.errorCode }).toEqual({ status: 403, type: 'permission_error', errorCode: 'model_not_allowed' });
  });

  it('404: a model no route serves is a NotFoundError', async () => {
    const err = await failure(client.messages.create({ model: 'claude-unknown', max_tokens: 16, messages: hi }), Anthropic.NotFoundError);
    expect({ status: err.status, type: err.type, errorCode: err.errorCode }).toEqual({ status: 404, type: 'not_found_error', errorCode: 'model_not_found' });
  });

  it('429: a token budget too small for max_tokens is a RateLimitError with Retry-After', async () => {
    const budgeted = new Anthropic({ baseURL: gw.url, apiKey: small.key, maxRetries: 0 });
    const err = await failure(budgeted.messages.create({ model: 'ok-a', max_tokens: 600, messages: hi }), Anthropic.RateLimitError);
    expect({ status: err.status, type: err.type, errorCode: err.errorCode }).toEqual({ status: 429, type: 'rate_limit_error', errorCode: 'rate_limited' });
    expect(Number(err.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // max_tokens and the prompt's bound under a hard budget: 2 bytes of text, 8 tokens a text and 32 a request.
    expect(err.message).toMatch(/fewer than the 642 this request may use/);
  });

  it('5xx: a backend that is down is an InternalServerError (502 api_error)', async () => {
    const err = await failure(client.messages.create({ model: 'dead-a', max_tokens: 16, messages: hi }), Anthropic.InternalServerError);
    expect({ status: err.status, type: err.type, errorCode: err.errorCode }).toEqual({ status: 502, type: 'api_error', errorCode: 'upstream_error' });
  });

  it("529: a backend's 503 is an OverloadedError, which the SDK retries after the backend's Retry-After", async () => {
    const err = await failure(client.messages.create({ model: 'lone-a', max_tokens: 16, messages: hi }), Anthropic.OverloadedError);
    expect({ status: err.status, type: err.type, errorCode: err.errorCode }).toEqual({ status: 529, type: 'overloaded_error', errorCode: 'upstream_unavailable' });
    expect(err.headers.get('retry-after')).toBe('1');
    // The SDK's own retry: it waits the Retry-After out; the model, out of rotation since the first 503, is tried anyway, and answers.
    const statuses: number[] = [];
    const recording: typeof fetch = async (url, init) => { const res = await fetch(url, init); statuses.push(res.status); return res; };
    const retrying = new Anthropic({ baseURL: gw.url, apiKey: all.key, maxRetries: 1, timeout: 5_000, fetch: recording });
    const started = Date.now();
    const message = await retrying.messages.create({ model: 'lone-a', max_tokens: 16, messages: hi });
    expect(statuses).toEqual([529, 200]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(message.content).toEqual([{ type: 'text', text: 'back' }]);
  });

  describe.each([
    ['a chat backend that drops the connection', 'break-a', 'api_error', 'upstream_error'],
    ['a chat backend that sends an error event', 'fail-a', 'api_error', 'upstream_error'],
    ['a native backend that drops the connection', 'native-cut', 'api_error', 'upstream_error'],
    ['a native backend that sends its own error event', 'native-overloaded', 'overloaded_error', null],
  ])('a failure after the stream started, from %s', (_what, model, type, errorCode) => {
    it('arrives as the stream\'s error event, which the SDK raises after the text that came first', async () => {
      const stream = client.messages.stream({ model, max_tokens: 64, messages: hi });
      let text = '';
      stream.on('text', (delta) => { text += delta; });
      const err = await failure(stream.finalMessage(), Anthropic.APIError);
      expect(text.length).toBeGreaterThan(0);
      expect({ status: err.status, type: err.type, errorCode: err.errorCode }).toEqual({ status: undefined, type, errorCode });
      expect(err.requestID).toMatch(/./);
    });
  });
});
