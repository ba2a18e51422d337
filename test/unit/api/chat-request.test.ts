import { parseChatRequest, OPENAI_CHAT_NAMES } from '../../../src/api/chat-request';
import { rejection } from '../../support/rejection';

const user = { role: 'user', content: 'hi' };
const valid = { model: 'chat-a', messages: [user] };

const paramOf = (body: unknown) => rejection(parseChatRequest, body).param;
const paramOfOpenai = (body: unknown) => rejection((b: unknown) => parseChatRequest(b, 'openai'), body).param;

describe('parseChatRequest', () => {
  it('tells a missing field from one of the wrong type', () => {
    expect(rejection(parseChatRequest, { model: 'm' }).message).toBe('messages is required.');
    expect(rejection(parseChatRequest, { model: 'm', messages: {} }).message).toBe('messages must be an array, got an object.');
    expect(rejection(parseChatRequest, { ...valid, stream: 'yes' }).message).toBe('stream must be a boolean, got a string.');
    expect(rejection(parseChatRequest, { ...valid, model_params: [] }).message).toBe('model_params must be an object, got an array.');
  });

  it('accepts the minimal body and fills the defaults', () => {
    expect(parseChatRequest(valid)).toEqual({ model: 'chat-a', messages: [user], stream: false, model_params: {}, texts: ['hi'] });
  });

  it('accepts every role and an empty content string', () => {
    const messages = [{ role: 'system', content: 's' }, { role: 'user', content: '' }, { role: 'assistant', content: 'a' }];
    expect(parseChatRequest({ model: 'm', messages }).messages).toEqual(messages);
  });

  it.each([
    ['missing', {}, 'model'],
    ['empty', { model: '' }, 'model'],
    ['a number', { model: 5 }, 'model'],
    ['null', { model: null }, 'model'],
    ['longer than 256 characters', { model: 'm'.repeat(257) }, 'model'],
  ])('rejects a model that is %s', (_what, patch, param) => {
    expect(paramOf({ ...valid, model: undefined, ...patch })).toBe(param);
  });

  it.each([
    ['missing', undefined],
    ['empty', []],
    ['an object', { role: 'user', content: 'x' }],
    ['a string', 'hello'],
  ])('rejects messages that is %s', (_what, messages) => {
    expect(paramOf({ model: 'm', messages })).toBe('messages');
  });

  it('names the exact message and field at fault', () => {
    expect(paramOf({ model: 'm', messages: [user, user, { role: 'tool', content: 'x' }] })).toBe('messages[2].role');
    expect(paramOf({ model: 'm', messages: [user, { content: 'x' }] })).toBe('messages[1].role');
    expect(paramOf({ model: 'm', messages: [{ role: 'user' }] })).toBe('messages[0].content');
    expect(paramOf({ model: 'm', messages: [{ role: 'user', content: null }] })).toBe('messages[0].content');
    expect(paramOf({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] })).toBe('messages[0].content');
    expect(paramOf({ model: 'm', messages: ['hi'] })).toBe('messages[0]');
    expect(paramOf({ model: 'm', messages: [{ role: 'user', content: 'x', name: 'bob' }] })).toBe('messages[0].name');
  });

  it('says which values role may take', () => {
    expect(rejection(parseChatRequest, { model: 'm', messages: [{ role: 'tool', content: 'x' }] }).message).toMatch(/system.*user.*assistant/);
  });

  it('takes stream as a boolean or null, null meaning off', () => {
    expect(parseChatRequest({ ...valid, stream: true }).stream).toBe(true);
    expect(parseChatRequest({ ...valid, stream: false }).stream).toBe(false);
    expect(parseChatRequest({ ...valid, stream: null }).stream).toBe(false);
    for (const stream of ['true', 1, {}]) expect(paramOf({ ...valid, stream })).toBe('stream');
  });

  it('takes model_params as an object or null', () => {
    expect(parseChatRequest({ ...valid, model_params: null }).model_params).toEqual({});
    expect(parseChatRequest({ ...valid, model_params: {} }).model_params).toEqual({});
    for (const model_params of [[], 'x', 3]) expect(paramOf({ ...valid, model_params })).toBe('model_params');
  });

  it('takes temperature and top_p as numbers or null', () => {
    expect(parseChatRequest({ ...valid, model_params: { temperature: 0.2, top_p: null } }).model_params).toEqual({ temperature: 0.2, top_p: null });
    expect(paramOf({ ...valid, model_params: { temperature: 'hot' } })).toBe('model_params.temperature');
    expect(paramOf({ ...valid, model_params: { top_p: '0.9' } })).toBe('model_params.top_p');
    expect(paramOf({ ...valid, model_params: { top_p: true } })).toBe('model_params.top_p');
  });

  it('passes any other model_params key through untouched', () => {
    const model_params = { repetition_penalty: 1.1, guided_json: { type: 'object' }, chat_template_kwargs: { enable_thinking: false } };
    expect(parseChatRequest({ ...valid, model_params }).model_params).toEqual(model_params);
  });

  it('checks the OpenAI names inside model_params as at the top level', () => {
    expect(paramOf({ ...valid, model_params: { max_tokens: 'backend decides' } })).toBe('model_params.max_tokens');
    expect(paramOf({ ...valid, model_params: { stop: 7 } })).toBe('model_params.stop');
    expect(paramOf({ ...valid, model_params: { tools: {} } })).toBe('model_params.tools');
  });

  it('folds the OpenAI request fields into model_params', () => {
    const tools = [{ type: 'function', function: { name: 'weather', description: 'Gets the weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const top = {
      temperature: 0.5, top_p: 0.9, max_tokens: 64, stop: ['\n'], n: 2, seed: 7, presence_penalty: 0.1, frequency_penalty: 0.2, user: 'u-1',
      max_completion_tokens: 64, stream_options: { include_usage: true }, response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
      tools, tool_choice: 'auto', parallel_tool_calls: false, logprobs: true, top_logprobs: 3, logit_bias: { '50256': -100 }, reasoning_effort: 'low',
      metadata: { team: 'search' }, service_tier: 'auto',
    };
    expect(Object.keys(top).sort()).toEqual([...OPENAI_CHAT_NAMES].sort());
    const parsed = parseChatRequest({ ...valid, ...top, model_params: { custom: true } });
    expect(parsed.model_params).toEqual({ custom: true, ...top });
    expect(parsed).not.toHaveProperty('temperature');
  });

  it('accepts the same key in both places when the values agree', () => {
    expect(parseChatRequest({ ...valid, temperature: 0.3, stop: ['x'], model_params: { temperature: 0.3, stop: ['x'] } }).model_params).toEqual({ temperature: 0.3, stop: ['x'] });
  });

  it('rejects the same key in both places with different values, naming it', () => {
    expect(paramOf({ ...valid, temperature: 0.3, model_params: { temperature: 0.4 } })).toBe('temperature');
    expect(paramOf({ ...valid, max_tokens: 10, model_params: { max_tokens: 20 } })).toBe('max_tokens');
    expect(paramOf({ ...valid, stop: ['a'], model_params: { stop: ['b'] } })).toBe('stop');
  });

  it('checks the types of the folded OpenAI names', () => {
    expect(paramOf({ ...valid, max_tokens: 1.5 })).toBe('max_tokens');
    expect(paramOf({ ...valid, stop: 4 })).toBe('stop');
    expect(paramOf({ ...valid, seed: 'x' })).toBe('seed');
    expect(paramOf({ ...valid, user: 1 })).toBe('user');
    expect(paramOf({ ...valid, n: '2' })).toBe('n');
  });

  it('checks the types of the OpenAI request fields', () => {
    expect(paramOf({ ...valid, tools: [{ type: 'function', function: {} }] })).toBe('tools[0].function.name');
    expect(paramOf({ ...valid, tools: 'weather' })).toBe('tools');
    expect(paramOf({ ...valid, tool_choice: 'sometimes' })).toBe('tool_choice');
    expect(paramOf({ ...valid, response_format: { type: 'yaml' } })).toBe('response_format.type');
    expect(paramOf({ ...valid, response_format: { type: 'json_schema' } })).toBe('response_format.json_schema');
    expect(paramOf({ ...valid, stream_options: { include_usage: 'yes' } })).toBe('stream_options.include_usage');
    expect(paramOf({ ...valid, logprobs: 1 })).toBe('logprobs');
    expect(paramOf({ ...valid, top_logprobs: 21 })).toBe('top_logprobs');
    expect(paramOf({ ...valid, max_completion_tokens: 1.5 })).toBe('max_completion_tokens');
    expect(paramOf({ ...valid, metadata: { a: 1 } })).toBe('metadata.a');
  });

  it('rejects any other unknown top-level field, naming it', () => {
    const e = rejection(parseChatRequest, { ...valid, functions: [] });
    expect(e.param).toBe('functions');
    expect(e.message).toContain('functions');
    expect(paramOf({ ...valid, prediction: { type: 'content' } })).toBe('prediction');
  });

  it('rejects a body that is not an object', () => {
    for (const body of [[], 'x', 1, null]) expect(rejection(parseChatRequest, body).param).toBeNull();
  });
});

describe('parseChatRequest, numbers too large for a double', () => {
  // JSON.parse reads 1e400 as Infinity: what the body reader hands on.
  const huge = JSON.parse('{"a":1e400,"b":-1e400}') as { a: number; b: number };

  it('names a typed field and says what is wrong, instead of "must be a number, got a number"', () => {
    expect(rejection(parseChatRequest, { ...valid, temperature: huge.a })).toMatchObject({ param: 'temperature', message: 'temperature is a number too large to represent; send one within ±1.7e308.' });
    expect(rejection(parseChatRequest, { ...valid, model_params: { top_p: huge.b } })).toMatchObject({ param: 'model_params.top_p', message: expect.stringContaining('too large to represent') });
    expect(paramOf({ ...valid, seed: huge.a })).toBe('seed');
    expect(paramOf({ ...valid, logit_bias: { 50256: huge.b } })).toBe('logit_bias.50256');
  });

  it('refuses one in a model-specific key, which would otherwise reach the backend as null', () => {
    expect(rejection(parseChatRequest, { ...valid, model_params: { foo: huge.a } })).toMatchObject({ param: 'model_params.foo', message: 'model_params.foo is a number too large to represent; send one within ±1.7e308.' });
    expect(paramOf({ ...valid, model_params: { guided: { bounds: [1, 2, { max: huge.b }] } } })).toBe('model_params.guided.bounds[2].max');
    // Under a field the schema does not look into: a tool's JSON schema, sent at the top level.
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { x: { type: 'number', maximum: huge.a } } } } }];
    expect(paramOf({ ...valid, tools })).toBe('tools[0].function.parameters.properties.x.maximum');
  });

  it('lets the largest finite numbers through', () => {
    expect(parseChatRequest({ ...valid, model_params: { foo: Number.MAX_VALUE, bar: -Number.MAX_VALUE, tiny: 5e-324 } }).model_params).toEqual({ foo: Number.MAX_VALUE, bar: -Number.MAX_VALUE, tiny: 5e-324 });
  });
});

describe('parseChatRequest, openai dialect', () => {
  const openai = (body: unknown) => parseChatRequest(body, 'openai');
  const rejectionOf = (messages: unknown[]) => rejection(openai, { model: 'm', messages });

  it('says what a message of the wrong shape must be, at the deepest path', () => {
    expect(rejectionOf([{ role: 'user', content: 5 }])).toMatchObject({ param: 'messages[0].content', message: 'messages[0].content must be a string or an array, got a number.' });
    expect(rejectionOf([{ role: 'user', content: [{ type: 'audio' }] }])).toMatchObject({ param: 'messages[0].content[0].type', message: 'messages[0].content[0].type must be one of "text", "image_url".' });
    expect(rejectionOf([{ role: 'robot', content: 'x' }]).message).toMatch(/^messages\[0\]\.role must be one of "system", "developer", "user", "assistant", "tool"/);
  });

  it('gathers every text the backend will read, in order', () => {
    const parsed = openai({
      model: 'm',
      messages: [
        { role: 'developer', content: [{ type: 'text', text: 'dev' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'c', content: 'result' },
      ],
      stop: 'END',
      tools: [{ type: 'function', function: { name: 'f', description: 'does f' } }],
    });
    // Object keys count too: a tool schema's property names reach the model as text.
    expect(parsed.texts).toEqual(['dev', 'c', 'f', '{"a":1}', 'result', 'c', 'END', 'type', 'function', 'function', 'name', 'f', 'description', 'does f']);
  });

  const sdkFields = {
    store: true, verbosity: 'low', prompt_cache_key: 'pck', safety_identifier: 'sid', modalities: ['text'],
    prediction: { type: 'content', content: 'predicted' }, metadata: { k: 'v' }, service_tier: 'auto',
    top_k: 20, min_p: 0.05, repetition_penalty: 1.1, chat_template_kwargs: { enable_thinking: false },
    guided_json: { type: 'object', description: 'guided' }, structured_outputs: { regex: 'a+' },
  };

  it('takes the fields the SDKs send, known or not, and folds them into model_params', () => {
    const parsed = openai({ model: 'm', messages: [user], ...sdkFields });
    expect(parsed.model_params).toEqual(sdkFields);
    expect(Object.keys(parsed)).toEqual(['model', 'messages', 'stream', 'model_params', 'texts']);
  });

  it('gathers every string of an unknown field, keys included, for the policy', () => {
    const texts = openai({ model: 'm', messages: [user], ...sdkFields }).texts;
    for (const text of ['low', 'pck', 'sid', 'text', 'predicted', 'content', 'guided', 'description', 'a+', 'regex', 'enable_thinking']) expect(texts).toContain(text);
  });

  it('still type-checks the fields it knows, and refuses what it cannot forward in an unknown one', () => {
    expect(paramOfOpenai({ model: 'm', messages: [user], metadata: { a: 1 }, top_k: 5 })).toBe('metadata.a');
    expect(paramOfOpenai({ model: 'm', messages: [user], stream: 'yes', top_k: 5 })).toBe('stream');
    const huge = JSON.parse('{"a":1e400}') as { a: number };
    expect(paramOfOpenai({ model: 'm', messages: [user], guided_json: { maximum: huge.a } })).toBe('guided_json.maximum');
    expect(paramOfOpenai({ model: 'm', messages: [user], top_k: 5, model_params: { top_k: 6 } })).toBe('top_k');
    expect(openai({ model: 'm', messages: [user], top_k: 5, model_params: { top_k: 5 } }).model_params).toEqual({ top_k: 5 });
  });

  it('keeps the interface dialect strict', () => {
    expect(paramOf({ ...valid, store: true })).toBe('store');
  });
});

describe('parseChatRequest, a route\'s field rules', () => {
  const rules = { refuse: ['store', 'logit_bias'], drop: ['top_k', 'service_tier'] };
  const parse = (body: Record<string, unknown>) => parseChatRequest({ model: 'm', messages: [user], ...body }, 'openai', rules);

  it('refuses a refused field with a value, naming where it was given', () => {
    expect(rejection(parse, { store: true })).toMatchObject({ reason: 'invalid_request', param: 'store', message: expect.stringContaining('store') });
    expect(rejection(parse, { model_params: { logit_bias: { 1: 2 } } }).param).toBe('model_params.logit_bias');
    // null is the model's default, which is never sent.
    expect(parse({ store: null }).model_params).toEqual({ store: null });
  });

  it('drops a dropped field from the top level and model_params, and reads none of its text', () => {
    const parsed = parse({ top_k: 5, service_tier: 'priority-tier', temperature: 0.1, model_params: { top_k: 5 } });
    expect(parsed.model_params).toEqual({ temperature: 0.1 });
    expect(parsed.texts).not.toContain('priority-tier');
  });

  it('applies to the interface dialect too', () => {
    expect(rejection((b: unknown) => parseChatRequest(b, 'interface', rules), { model: 'm', messages: [user], logit_bias: { 1: 2 } }).param).toBe('logit_bias');
    expect(parseChatRequest({ model: 'm', messages: [user], model_params: { top_k: 5 } }, 'interface', rules).model_params).toEqual({});
  });
});
