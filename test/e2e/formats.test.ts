// What goes to each backend format and what comes back, on /v1 and /v2.
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';

const alice = makeKey('alice');
const messages = [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }];

describe('format: openai', () => {
  let backend: Backend;
  let gw: TestGateway;

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 3, gapMs: 0 });
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: { vllm: { url: backend.base, format: 'openai' } },
      routes: [{ model: 'chat-*', upstream: 'vllm', upstreamModel: 'ok-Qwen/Qwen2.5-7B' }, { model: '*', upstream: 'vllm' }],
    });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  it.each(['v1', 'v2'])('flattens model_params into the top-level OpenAI fields (%s)', async (version) => {
    const res = await post(`${gw.url}/${version}/chat/completions`, {
      model: 'chat-small', messages, max_tokens: 32, stream: false,
      model_params: { temperature: 0.3, top_p: null, repetition_penalty: 1.1, guided_json: { type: 'object' } },
    }, bearer(alice.key));
    expect(res.status).toBe(200);
    const sent = backend.requests.at(-1)!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.body).toEqual({ model: 'ok-Qwen/Qwen2.5-7B', messages, temperature: 0.3, max_tokens: 32, repetition_penalty: 1.1, guided_json: { type: 'object' } });
  });

  it('answers a chat completion object with the client\'s model id and integer created', async () => {
    const res = await post(`${gw.url}/v1/chat/completions`, { model: 'chat-small', messages }, bearer(alice.key));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      id: 'chatcmpl-backend', object: 'chat.completion', created: 1_700_000_000, model: 'chat-small', system_fingerprint: 'fp_x',
      choices: [{ index: 0, message: { role: 'assistant', content: 'alpha beta gamma' }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
    });
  });

  it('estimates usage when the backend reports none', async () => {
    const res = await post(`${gw.url}/v2/chat/completions`, { model: 'nousage-a', messages }, bearer(alice.key));
    expect(res.status).toBe(200);
    const { prompt_tokens, completion_tokens, total_tokens } = res.body.usage;
    expect(prompt_tokens).toBe(Math.ceil('be briefhi'.length / 4));
    expect(completion_tokens).toBe(Math.ceil('alpha beta gamma'.length / 4));
    expect(total_tokens).toBe(prompt_tokens + completion_tokens);
  });

  it('asks a streamed backend for usage and folds its usage-only chunk into the last chunk', async () => {
    const res = await postSse(`${gw.url}/v1/chat/completions`, { model: 'chat-small', messages, stream: true, temperature: 0.5 }, bearer(alice.key));
    const sent = backend.requests.at(-1)!.body;
    expect(sent).toMatchObject({ model: 'ok-Qwen/Qwen2.5-7B', stream: true, stream_options: { include_usage: true }, temperature: 0.5 });
    expect(sent).not.toHaveProperty('model_params');
    const data = res.events.map((e) => e.data);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.choices[0].delta.content ?? null)).toEqual(['alpha', ' beta', ' gamma', null]);
    expect(chunks.every((c) => c.model === 'chat-small' && c.id === 'chatcmpl-stream')).toBe(true);
    expect(chunks.filter((c) => 'usage' in c)).toEqual([chunks.at(-1)]);
    expect(chunks.at(-1)).toEqual({
      id: 'chatcmpl-stream', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'chat-small',
      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
    });
  });

  it('ends a stream with estimated usage when the backend reports none', async () => {
    const res = await postSse(`${gw.url}/v2/chat/completions`, { model: 'nousage-a', messages, stream: true }, bearer(alice.key));
    const last = JSON.parse(res.events.at(-2)!.data);
    expect(last.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it.each(['v1', 'v2'])('gives an image answer without id one, with integer created and only URLs (%s)', async (version) => {
    const res = await post(`${gw.url}/${version}/images/generations`, { model: 'img-a', prompt: 'a lighthouse', model_params: { n: 2, size: '256x256', style: null } }, bearer(alice.key));
    expect(res.status).toBe(200);
    expect(backend.requests.at(-1)).toMatchObject({ url: '/v1/images/generations', body: { model: 'img-a', prompt: 'a lighthouse', n: 2, size: '256x256' } });
    expect(backend.requests.at(-1)!.body).not.toHaveProperty('style');
    expect(res.body).toEqual({ id: expect.stringMatching(/^img-\w+/), created: 1_700_000_000, data: [{ url: 'https://images.example/0.png' }, { url: 'https://images.example/1.png' }] });
    const again = await post(`${gw.url}/${version}/images/generations`, { model: 'img-a', prompt: 'x' }, bearer(alice.key));
    expect(again.body.id).not.toBe(res.body.id);
  });
});

describe('format: native', () => {
  let backend: Backend;
  let gw: TestGateway;

  beforeAll(async () => {
    backend = await startBackend({ format: 'native', events: 3, gapMs: 0 });
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: { house: { url: backend.base, format: 'native' } },
      routes: [{ model: 'house-*', upstream: 'house', upstreamModel: 'ok-internal' }, { model: '*', upstream: 'house' }],
    });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  it.each(['v1', 'v2'])('sends the body with only the model renamed (%s)', async (version) => {
    const body = { model: 'house-chat', messages, stream: true, model_params: { temperature: 0.1, top_p: null, custom: { deep: [1, 2] } } };
    await postSse(`${gw.url}/${version}/chat/completions`, body, bearer(alice.key));
    expect(backend.requests.at(-1)).toMatchObject({ url: '/v1/chat/completions' });
    expect(backend.requests.at(-1)!.body).toEqual({ ...body, model: 'ok-internal' });
    const image = { model: 'house-img', prompt: 'a fox', model_params: { n: 2, size: '64x64', seed: 3 } };
    await post(`${gw.url}/${version}/images/generations`, image, bearer(alice.key));
    expect(backend.requests.at(-1)!.body).toEqual({ ...image, model: 'ok-internal' });
  });

  it('returns the JSON answer\'s bytes untouched', async () => {
    const res = await post(`${gw.url}/v1/chat/completions`, { model: 'ok-a', messages }, bearer(alice.key));
    expect(res.status).toBe(200);
    expect(res.text).toBe(backend.replies.at(-1));
    const image = await post(`${gw.url}/v2/images/generations`, { model: 'ok-a', prompt: 'p' }, bearer(alice.key));
    expect(image.text).toBe(backend.replies.at(-1));
    expect(image.body.id).toBe('img-native');
  });

  it('relays every streamed event\'s data untouched, [DONE] included', async () => {
    const res = await postSse(`${gw.url}/v2/chat/completions`, { model: 'ok-a', messages, stream: true }, bearer(alice.key));
    expect(res.status).toBe(200);
    expect(res.events.map((e) => e.data)).toEqual(backend.sentData.at(-1));
    expect(res.events.at(-1)!.data).toBe('[DONE]');
  });
});
