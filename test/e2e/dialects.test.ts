// Message forms by dialect: the interface's rules by default, OpenAI's forms
// where a route or upstream says `dialect: openai`, and model retrieval.
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post } from '../support/http';
import { expectError } from '../support/errors';

const toolTurn = [
  { role: 'developer', content: 'Be brief.' },
  { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }, { type: 'image_url', image_url: { url: 'https://example.test/sky.png' } }] },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', name: 'weather', content: 'sunny' },
];

describe('message dialects', () => {
  let openai: Backend;
  let native: Backend;
  let gw: TestGateway;
  const alice = makeKey('alice');
  const chat = (body: object) => post(`${gw.url}/v1/chat/completions`, body, bearer(alice.key));

  beforeAll(async () => {
    openai = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    native = await startBackend({ format: 'native', events: 2, gapMs: 0 });
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: { o: { url: openai.base, dialect: 'openai' }, n: { url: native.base, format: 'native' } },
      routes: [
        { model: 'ok-strict', upstream: 'o', dialect: 'interface' },
        { model: 'ok-native', upstream: 'n' },
        { model: 'meta-llama/*', upstream: 'o', advertise: ['meta-llama/Llama-3-8B'] },
        { model: 'ruled', upstream: 'o', fields: { refuse: ['store'], drop: ['top_k', 'service_tier'] } },
        { model: 'ok-*', upstream: 'o' },
      ],
      plugins: [{ name: 'content-filter', terms: ['forbidden phrase'] }],
    });
  });
  afterAll(async () => { await gw.close(); await openai.close(); await native.close(); });

  let before = 0;
  beforeEach(() => { before = openai.requests.length + native.requests.length; });
  const reached = () => openai.requests.length + native.requests.length - before;

  it('keeps the interface\'s rules by default: a tool role, a developer role, content parts are 400s naming the message', async () => {
    for (const model of ['ok-strict', 'ok-native']) {
      expectError(await chat({ model, messages: [{ role: 'tool', tool_call_id: 'c', content: 'x' }] }), 400, 'invalid_request', 'messages[0].role');
      expectError(await chat({ model, messages: [{ role: 'developer', content: 'x' }] }), 400, 'invalid_request', 'messages[0].role');
      expectError(await chat({ model, messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] }), 400, 'invalid_request', 'messages[0].content');
      expectError(await chat({ model, messages: [{ role: 'assistant', content: 'x', tool_calls: [] }] }), 400, 'invalid_request', 'messages[0].tool_calls');
    }
    expect(reached()).toBe(0);
  });

  it('accepts OpenAI\'s forms on an openai-dialect upstream and forwards them intact', async () => {
    const res = await chat({ model: 'ok-tools', messages: toolTurn, tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }], tool_choice: 'auto', max_completion_tokens: 50 });
    expect(res.status).toBe(200);
    const sent = openai.requests.at(-1)!.body;
    expect(sent.messages).toEqual(toolTurn);
    expect(sent).toMatchObject({ tool_choice: 'auto', max_completion_tokens: 50, tools: [{ type: 'function', function: { name: 'weather' } }] });
  });

  // What the openai and vLLM clients send at the top level (extra_body included).
  const sdkFields = {
    store: false, verbosity: 'low', prompt_cache_key: 'user-42', safety_identifier: 'hash-42', modalities: ['text'],
    prediction: { type: 'content', content: 'Sunny.' }, metadata: { team: 'a' }, service_tier: 'auto',
    top_k: 20, min_p: 0.05, repetition_penalty: 1.1, chat_template_kwargs: { enable_thinking: false },
    guided_json: { type: 'object' }, structured_outputs: { choice: ['yes', 'no'] },
  };

  it('forwards the top-level fields the SDKs send on an openai-dialect route, known or not, as sent', async () => {
    const res = await chat({ model: 'ok-sdk', messages: [{ role: 'user', content: 'hi' }], ...sdkFields });
    expect(res.status).toBe(200);
    expect(openai.requests.at(-1)!.body).toMatchObject(sdkFields);
  });

  it('keeps the interface dialect strict: an unknown top-level field is a 400 naming it', async () => {
    expectError(await chat({ model: 'ok-strict', messages: [{ role: 'user', content: 'hi' }], top_k: 20 }), 400, 'invalid_request', 'top_k');
    expect(reached()).toBe(0);
  });

  it('runs the content filter over every string of an unknown field, however deep', async () => {
    const cases = [
      { prediction: { type: 'content', content: 'a forbidden phrase' } },
      { chat_template_kwargs: { system_hint: ['x', 'the forbidden phrase'] } },
      { guided_json: { type: 'object', properties: { 'forbidden phrase': { type: 'string' } } } },
    ];
    for (const extra of cases) expectError(await chat({ model: 'ok-sdk', messages: [{ role: 'user', content: 'hi' }], ...extra }), 400, 'content_filter', 'prompt');
    expect(reached()).toBe(0);
  });

  it('refuses a field the route refuses, naming it, and drops the ones it drops', async () => {
    expectError(await chat({ model: 'ruled', messages: [{ role: 'user', content: 'hi' }], store: true }), 400, 'invalid_request', 'store');
    expect(reached()).toBe(0);
    // A dropped field's text is not forwarded, so it is not the content filter's business either.
    const res = await chat({ model: 'ruled', messages: [{ role: 'user', content: 'hi' }], top_k: 20, min_p: 0.1, model_params: { service_tier: 'forbidden phrase' } });
    expect(res.status).toBe(200);
    const sent = openai.requests.at(-1)!.body;
    expect(sent.min_p).toBe(0.1);
    expect('top_k' in sent || 'service_tier' in sent).toBe(false);
  });

  it('names the path of a malformed OpenAI message', async () => {
    const broken = (patch: object) => chat({ model: 'ok-tools', messages: [toolTurn[0], { ...toolTurn[2], ...patch }] });
    expectError(await broken({ tool_calls: [{ id: 'c', type: 'function', function: { name: 'f' } }] }), 400, 'invalid_request', 'messages[1].tool_calls[0].function.arguments');
    expectError(await broken({ tool_calls: undefined }), 400, 'invalid_request', 'messages[1].content');
    expectError(await chat({ model: 'ok-tools', messages: [{ role: 'tool', content: 'x' }] }), 400, 'invalid_request', 'messages[0].tool_call_id');
    expectError(await chat({ model: 'ok-tools', messages: [{ role: 'robot', content: 'x' }] }), 400, 'invalid_request', 'messages[0].role');
    expectError(await chat({ model: 'ok-tools', messages: [{ role: 'user', content: [{ type: 'audio', data: 'x' }] }] }), 400, 'invalid_request', 'messages[0].content[0].type');
    expect(reached()).toBe(0);
  });

  it('sends a native backend only what the interface defines', async () => {
    const res = await chat({ model: 'ok-native', stream: true, stream_options: { include_usage: true }, temperature: 0.1, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    expect(native.requests.at(-1)!.body).toEqual({ model: 'ok-native', stream: true, messages: [{ role: 'user', content: 'hi' }], model_params: { temperature: 0.1 } });
  });

  it('retrieves a model by id, with or without its slash encoded, and 404s one no route serves', async () => {
    for (const path of ['ok-anything', 'meta-llama/Llama-3-8B', 'meta-llama%2FLlama-3-8B']) {
      const res = await call('GET', `${gw.url}/v2/models/${path}`, undefined, bearer(alice.key));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: decodeURIComponent(path), object: 'model', created: 0, owned_by: 'sluice', endpoints: ['chat', 'images'] });
    }
    expectError(await call('GET', `${gw.url}/v1/models/gpt-4`, undefined, bearer(alice.key)), 404, 'model_not_found', 'model');
    expectError(await call('DELETE', `${gw.url}/v1/models/ok-a`, undefined, bearer(alice.key)), 405, 'method_not_allowed');
    expectError(await call('GET', `${gw.url}/v1/models/ok-a`, undefined), 401, 'unauthorized');
  });
});
