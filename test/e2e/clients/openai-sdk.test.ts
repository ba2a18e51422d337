// The official openai client, used as its docs say, against the gateway in
// front of an OpenAI-compatible backend: chat, streams with usage, tool
// calls, JSON and structured output, reasoning-model parameters, logprobs,
// content parts, images and model lookup. Errors are in openai-sdk-errors.
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { ROUTED_MODEL, startClientStack, type ClientStack } from '../../support/client-stack';
import { FINGERPRINT, PLAIN_REPLY, PLAIN_USAGE } from '../../support/openai-answers';
import { imageUrl, PNG_BASE64, revisedPrompt } from '../../support/openai-backend';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const weatherTool: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'boolean' } }, required: ['city', 'celsius'], additionalProperties: false },
  },
};

async function collect(stream: AsyncIterable<Chunk>): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('openai SDK through the gateway', () => {
  let stack: ClientStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startClientStack();
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.key, maxRetries: 0, timeout: 5000 });
  });
  afterAll(() => stack?.close());

  it('answers a chat with the backend\'s extra fields and the requested model id', async () => {
    const completion = await client.chat.completions.create({ model: ROUTED_MODEL, messages: [{ role: 'user', content: 'Hi' }], service_tier: 'default' });
    expect(completion.model).toBe(ROUTED_MODEL);
    expect(completion.choices[0].message).toMatchObject({ role: 'assistant', content: PLAIN_REPLY, refusal: null });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject(PLAIN_USAGE);
    expect(completion.system_fingerprint).toBe(FINGERPRINT);
    expect(completion.service_tier).toBe('default');
  });

  it('sends the fields the SDK knows and vLLM\'s extra_body fields, and the backend gets them at the top level', async () => {
    const vllm = { top_k: 20, min_p: 0.05, repetition_penalty: 1.1, chat_template_kwargs: { enable_thinking: false }, guided_json: { type: 'object' }, structured_outputs: { choice: ['a', 'b'] } };
    const completion = await client.chat.completions.create({
      model: ROUTED_MODEL, messages: [{ role: 'user', content: 'Hi' }],
      store: false, verbosity: 'low', prompt_cache_key: 'user-42', safety_identifier: 'hash-42', modalities: ['text'],
      prediction: { type: 'content', content: 'Hello' }, metadata: { team: 'a' },
      ...vllm,
    } as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming);
    expect(completion.choices[0].message.content).toBe(PLAIN_REPLY);
    expect(stack.backend.last('/chat/completions').body).toMatchObject({
      store: false, verbosity: 'low', prompt_cache_key: 'user-42', safety_identifier: 'hash-42', modalities: ['text'],
      prediction: { type: 'content', content: 'Hello' }, metadata: { team: 'a' }, ...vllm,
    });
  });

  it('streams with usage in the last chunk, with or without stream_options', async () => {
    for (const streamOptions of [{ include_usage: true }, undefined]) {
      const chunks = await collect(await client.chat.completions.create({ model: ROUTED_MODEL, stream: true, stream_options: streamOptions, messages: [{ role: 'user', content: 'Hi' }] }));
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(PLAIN_REPLY);
      expect(chunks[0].choices[0].delta.role).toBe('assistant');
      expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
      expect(chunks.at(-1)!.usage).toMatchObject(PLAIN_USAGE);
      expect(chunks.every((c) => c.model === ROUTED_MODEL && c.system_fingerprint === FINGERPRINT)).toBe(true);
    }
    expect(stack.backend.last('/chat/completions').body.stream_options).toEqual({ include_usage: true });
  });

  it('returns n choices', async () => {
    const completion = await client.chat.completions.create({ model: ROUTED_MODEL, n: 2, messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices.map((c) => [c.index, c.message.content])).toEqual([[0, PLAIN_REPLY], [1, PLAIN_REPLY]]);
    expect(completion.usage?.completion_tokens).toBe(2 * PLAIN_USAGE.completion_tokens);
  });

  it('runs a tool-call round trip', async () => {
    const messages: Message[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.create({ model: ROUTED_MODEL, messages, tools: [weatherTool], tool_choice: 'auto', parallel_tool_calls: false });
    const asked = first.choices[0];
    expect(asked.finish_reason).toBe('tool_calls');
    expect(asked.message.content).toBeNull();
    const call = asked.message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'example', celsius: true });
    expect(stack.backend.last().body).toMatchObject({ tools: [weatherTool], tool_choice: 'auto', parallel_tool_calls: false });

    messages.push({ role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: '{"temperature":21}' });
    const answer = await client.chat.completions.create({ model: ROUTED_MODEL, messages, tools: [weatherTool] });
    expect(answer.choices[0].message.content).toBe('The tool said: {"temperature":21}');
    expect(stack.backend.last().body.messages).toEqual(messages);
  });

  it('runs a streamed tool-call round trip', async () => {
    const messages: Message[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const chunks = await collect(await client.chat.completions.create({ model: ROUTED_MODEL, stream: true, messages, tools: [weatherTool] }));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(deltas.length).toBeGreaterThan(2);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    const args = deltas.map((d) => d.function?.arguments ?? '').join('');
    expect(JSON.parse(args)).toEqual({ city: 'example', celsius: true });
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('tool_calls');

    const id = deltas[0].id!;
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: args } }] }, { role: 'tool', tool_call_id: id, content: 'sunny' });
    const answer = await collect(await client.chat.completions.create({ model: ROUTED_MODEL, stream: true, messages, tools: [weatherTool] }));
    expect(answer.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('The tool said: sunny');
    expect(stack.backend.last().body.messages).toEqual(messages);
  });

  it('answers JSON mode and structured output', async () => {
    const json = await client.chat.completions.create({ model: ROUTED_MODEL, response_format: { type: 'json_object' }, messages: [{ role: 'user', content: 'JSON please' }] });
    expect(JSON.parse(json.choices[0].message.content!)).toEqual({ answer: 'example' });

    const Event = z.object({ name: z.string(), attendees: z.array(z.string()), day: z.number().int() });
    const parsed = await client.chat.completions.parse({ model: ROUTED_MODEL, response_format: zodResponseFormat(Event, 'event'), messages: [{ role: 'user', content: 'Alice and Bob meet on day 3' }] });
    expect(parsed.choices[0].message.parsed).toEqual({ name: 'example', attendees: ['example'], day: 1 });
    expect(stack.backend.last().body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'event', strict: true } });
  });

  it('passes a reasoning model\'s developer role, max_completion_tokens and reasoning_effort', async () => {
    const completion = await client.chat.completions.create({
      model: 'o3-mini', reasoning_effort: 'low', max_completion_tokens: 64, metadata: { team: 'search' },
      messages: [{ role: 'developer', content: 'Answer briefly.' }, { role: 'user', content: 'Hi' }],
    });
    expect(completion.choices[0].message.content).toBe(PLAIN_REPLY);
    expect(completion.model).toBe('o3-mini');
    const sent = stack.backend.last().body;
    expect(sent).toMatchObject({ model: 'o3-mini', reasoning_effort: 'low', max_completion_tokens: 64, metadata: { team: 'search' } });
    expect(sent.messages[0]).toEqual({ role: 'developer', content: 'Answer briefly.' });
    expect(sent).not.toHaveProperty('max_tokens');
  });

  it('passes logprobs through, in JSON and in every streamed chunk', async () => {
    const completion = await client.chat.completions.create({ model: ROUTED_MODEL, logprobs: true, top_logprobs: 2, messages: [{ role: 'user', content: 'Hi' }] });
    const content = completion.choices[0].logprobs!.content!;
    expect(content.map((t) => t.token).join('')).toBe(PLAIN_REPLY);
    expect(content[0]).toEqual({ token: 'Hello', logprob: expect.any(Number), bytes: [...Buffer.from('Hello')], top_logprobs: [expect.objectContaining({ token: 'Hello' }), expect.objectContaining({ token: ' alt1' })] });

    const chunks = await collect(await client.chat.completions.create({ model: ROUTED_MODEL, stream: true, logprobs: true, top_logprobs: 1, messages: [{ role: 'user', content: 'Hi' }] }));
    const withText = chunks.filter((c) => (c.choices[0]?.delta?.content ?? '') !== '');
    expect(withText.length).toBe(PLAIN_USAGE.completion_tokens);
    for (const c of withText) expect(c.choices[0].logprobs?.content?.[0]?.token).toBe(c.choices[0].delta.content);
  });

  it('accepts content as text and image_url parts', async () => {
    const content: OpenAI.Chat.Completions.ChatCompletionContentPart[] = [
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'low' } },
    ];
    const completion = await client.chat.completions.create({ model: ROUTED_MODEL, messages: [{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }] }, { role: 'user', content, name: 'alice' }] });
    expect(completion.choices[0].message.content).toBe(PLAIN_REPLY);
    expect(stack.backend.last().body.messages[1]).toEqual({ role: 'user', content, name: 'alice' });
  });

  it('reads a stream the backend sent without the event-stream content type', async () => {
    const chunks = await collect(await client.chat.completions.create({ model: 'noctype-chat', stream: true, messages: [{ role: 'user', content: 'Hi' }] }));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(PLAIN_REPLY);
    expect(chunks.at(-1)!.usage).toMatchObject(PLAIN_USAGE);
  });

  it('generates images as URLs and as base64', async () => {
    const urls = await client.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', n: 2, size: '1024x1024' });
    expect(urls.data).toEqual([{ url: imageUrl(0), revised_prompt: revisedPrompt('a lighthouse') }, { url: imageUrl(1), revised_prompt: revisedPrompt('a lighthouse') }]);

    const b64 = await client.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', response_format: 'b64_json' });
    expect(b64.data).toEqual([{ b64_json: PNG_BASE64, revised_prompt: revisedPrompt('a lighthouse') }]);
    expect(stack.backend.last('/images/generations').body).toMatchObject({ response_format: 'b64_json' });

    const only = await client.images.generate({ model: 'b64only-image', prompt: 'a lighthouse' });
    expect(only.data?.[0]?.b64_json).toBe(PNG_BASE64);
    expect(only.data?.[0]).not.toHaveProperty('url');
  });

  it('retrieves a routed model, and 404s one the key may not use', async () => {
    const model = await client.models.retrieve(ROUTED_MODEL);
    expect(model).toMatchObject({ id: ROUTED_MODEL, object: 'model', created: expect.any(Number), owned_by: expect.any(String), endpoints: expect.arrayContaining(['chat']) });

    const limited = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.limitedKey, maxRetries: 0 });
    expect((await limited.models.retrieve(ROUTED_MODEL)).id).toBe(ROUTED_MODEL);
    const err = await limited.models.retrieve('gpt-5-mini').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_found');
    expect((err as InstanceType<typeof OpenAI.APIError>).type).toBe('not_found_error');
  });
});
