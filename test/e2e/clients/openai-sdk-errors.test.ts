// Errors as the official openai client reads them: its typed classes, and
// code/type/param from the body, for errors the gateway makes and errors a
// backend makes; and the content filter on every OpenAI message form.
import OpenAI from 'openai';
import { FORBIDDEN, ROUTED_MODEL, startClientStack, type ClientStack } from '../../support/client-stack';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const call = { id: 'call_1', type: 'function' as const, function: { name: 'lookup', arguments: '{"q":"x"}' } };

/** Each OpenAI message form carrying the forbidden text somewhere the filter must look. */
const smuggled: Record<string, Message[]> = {
  'a text part': [{ role: 'user', content: [{ type: 'text', text: 'fine' }, { type: 'text', text: `say the ${FORBIDDEN}` }] }],
  'a tool result': [{ role: 'user', content: 'Look it up' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: `the ${FORBIDDEN}` }],
  'a developer message': [{ role: 'developer', content: `Always use the ${FORBIDDEN}.` }, { role: 'user', content: 'Hi' }],
  'tool-call arguments': [{ role: 'user', content: 'Look it up' }, { role: 'assistant', content: null, tool_calls: [{ ...call, function: { name: 'lookup', arguments: `{"q":"${FORBIDDEN}"}` } }] }, { role: 'tool', tool_call_id: 'call_1', content: 'nothing' }],
};

async function failure(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('openai SDK errors through the gateway', () => {
  let stack: ClientStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startClientStack();
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.key, maxRetries: 0, timeout: 5000 });
  });
  afterAll(() => stack?.close());

  it('gives a gateway-made refusal the code, type and param an SDK reads, and keeps the interface\'s fields', async () => {
    const err = await failure(client.chat.completions.create({ model: ROUTED_MODEL, messages: [{ role: 'user', content: `the ${FORBIDDEN}` }] }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect({ status: err.status, code: err.code, type: err.type, param: err.param }).toEqual({ status: 400, code: 'content_filter', type: 'invalid_request_error', param: 'prompt' });
    expect(err.error).toEqual({ message: expect.any(String), param: 'prompt', reason: 'content_filter', status: 400, code: 'content_filter', type: 'invalid_request_error' });
  });

  it.each(Object.keys(smuggled))('refuses forbidden text in %s before it reaches the backend', async (form) => {
    const before = stack.backend.requests.length;
    const err = await failure(client.chat.completions.create({ model: ROUTED_MODEL, messages: smuggled[form] }));
    expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: 'content_filter' });
    expect(stack.backend.requests.length).toBe(before);
  });

  it('passes a backend 429 on as a RateLimitError with its Retry-After', async () => {
    for (const stream of [false, true]) {
      const err = await failure(client.chat.completions.create({ model: 'busy-chat', stream, messages: [{ role: 'user', content: 'Hi' }] }));
      expect(err).toBeInstanceOf(OpenAI.RateLimitError);
      expect(err.status).toBe(429);
      expect(err.headers?.get('retry-after')).toBe('1');
      expect({ code: err.code, type: err.type }).toEqual({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
      expect(err.error).toMatchObject({ reason: 'upstream_rejected', status: 429, param: null, message: expect.stringContaining('Rate limit reached') });
    }
  });

  it('lets the SDK honour Retry-After and retry once', async () => {
    const retrying = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.key, maxRetries: 1, timeout: 5000 });
    const before = stack.backend.requests.length;
    const started = Date.now();
    const err = await failure(retrying.chat.completions.create({ model: 'busy-chat', messages: [{ role: 'user', content: 'Hi' }] }));
    expect(err.status).toBe(429);
    // Each time, the gateway itself waits out the backend's short Retry-After (1 s) once before it answers (retry.maxRetryAfterWaitMs),
    // then the SDK waits it out once more: two attempts a call, two calls.
    expect(stack.backend.requests.length - before).toBe(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2700);
  });

  it('passes a backend\'s context-length refusal on with its status and message', async () => {
    const err = await failure(client.chat.completions.create({ model: 'ctxlen-chat', messages: [{ role: 'user', content: 'a very long prompt' }] }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect({ status: err.status, code: err.code, type: err.type }).toEqual({ status: 400, code: 'context_length_exceeded', type: 'invalid_request_error' });
    expect(err.message).toContain('maximum context length');
  });

  it('refuses a wrong key with an AuthenticationError', async () => {
    const stranger = new OpenAI({ baseURL: stack.baseURL, apiKey: 'sk-wrong', maxRetries: 0 });
    const err = await failure(stranger.chat.completions.create({ model: ROUTED_MODEL, messages: [{ role: 'user', content: 'Hi' }] }));
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect({ code: err.code, type: err.type }).toEqual({ code: 'unauthorized', type: 'authentication_error' });
  });

  it('refuses a model outside the key\'s allow-list with a PermissionDeniedError', async () => {
    const limited = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.limitedKey, maxRetries: 0 });
    const err = await failure(limited.chat.completions.create({ model: 'gpt-5-mini', messages: [{ role: 'user', content: 'Hi' }] }));
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect({ code: err.code, type: err.type }).toEqual({ code: 'model_not_allowed', type: 'permission_error' });
  });
});
