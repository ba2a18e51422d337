// The official openai npm client, unchanged, against the gateway.
import OpenAI from 'openai';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';

describe.each(['openai', 'native'] as const)('official openai client, %s-format backend', (format) => {
  let backend: Backend;
  let gw: TestGateway;
  let client: OpenAI;
  const alice = makeKey('alice');

  beforeAll(async () => {
    backend = await startBackend({ format, events: 3, gapMs: 5 });
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: { b: { url: backend.base, format } },
      routes: [{ model: 'ok-chat', upstream: 'b', endpoints: ['chat'] }, { model: '*', upstream: 'b' }],
      plugins: [{ name: 'content-filter', terms: ['forbidden phrase'] }],
    });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: alice.key, maxRetries: 0, timeout: 5000 });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  it('creates a chat completion', async () => {
    const completion = await client.chat.completions.create({ model: 'ok-chat', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.2, max_tokens: 16 });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: 'alpha beta gamma' });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage?.total_tokens).toBe(14);
    const sent = backend.requests.at(-1)!.body;
    if (format === 'openai') expect(sent).toMatchObject({ temperature: 0.2, max_tokens: 16 });
    else expect(sent.model_params).toEqual({ temperature: 0.2, max_tokens: 16 });
  });

  it('streams a chat completion', async () => {
    const stream = await client.chat.completions.create({ model: 'ok-chat', stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    let text = '';
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(text).toBe('alpha beta gamma');
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)!.usage?.total_tokens).toBe(14);
  });

  it('generates images', async () => {
    const images = await client.images.generate({ model: 'ok-img', prompt: 'a lighthouse', n: 2, size: '256x256' });
    expect(images.data?.map((d) => d.url)).toEqual(['https://images.example/0.png', 'https://images.example/1.png']);
    expect(Number.isInteger(images.created)).toBe(true);
  });

  it('surfaces gateway errors as the client\'s typed errors', async () => {
    const refused = await client.chat.completions.create({ model: 'ok-chat', messages: [{ role: 'user', content: 'the forbidden phrase' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ reason: 'content_filter', param: 'prompt', status: 400 });
    const bad = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-wrong', maxRetries: 0 });
    await expect(bad.chat.completions.create({ model: 'ok-chat', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('lists models', async () => {
    const page = await client.models.list();
    expect(page.data).toEqual([expect.objectContaining({ id: 'ok-chat', object: 'model' })]);
  });
});
