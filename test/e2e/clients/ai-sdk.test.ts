// The Vercel AI SDK, used as its docs say, against the gateway: the OpenAI
// provider's chat models (createOpenAI().chat) and the generic
// OpenAI-compatible provider, for text, streams, tools, objects and images.
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, generateImage, generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { FORBIDDEN, ROUTED_MODEL, startClientStack, type ClientStack } from '../../support/client-stack';
import { FINGERPRINT, PLAIN_REPLY, PLAIN_USAGE } from '../../support/openai-answers';
import { PNG_BASE64, revisedPrompt } from '../../support/openai-backend';

const usage = { inputTokens: PLAIN_USAGE.prompt_tokens, outputTokens: PLAIN_USAGE.completion_tokens, totalTokens: PLAIN_USAGE.total_tokens };

const weather = () => tool({
  description: 'Current weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, temperature: 21 }),
});

const City = z.object({ city: z.string(), population: z.number().int(), tags: z.array(z.string()), coastal: z.boolean(), mayor: z.object({ name: z.string() }) });
const sampleCity = { city: 'example', population: 1, tags: ['example'], coastal: true, mayor: { name: 'example' } };

async function apiCallError(promise: Promise<unknown>): Promise<APICallError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(APICallError.isInstance(err)).toBe(true);
  return err as APICallError;
}

describe('AI SDK through the gateway', () => {
  let stack: ClientStack;
  let openai: ReturnType<typeof createOpenAI>;
  let compatible: ReturnType<typeof createOpenAICompatible>;

  beforeAll(async () => {
    stack = await startClientStack();
    openai = createOpenAI({ baseURL: stack.baseURL, apiKey: stack.key });
    compatible = createOpenAICompatible({ name: 'sluice', baseURL: stack.baseURL, apiKey: stack.key, includeUsage: true, supportsStructuredOutputs: true });
  });
  afterAll(() => stack?.close());

  const models = () => [['openai', openai.chat(ROUTED_MODEL)], ['openai-compatible', compatible.chatModel(ROUTED_MODEL)]] as const;

  it('generates text with both providers', async () => {
    for (const [provider, model] of models()) {
      const result = await generateText({ model, prompt: 'Hi', temperature: 0.2, maxRetries: 0 });
      expect({ provider, text: result.text, finish: result.finishReason }).toEqual({ provider, text: PLAIN_REPLY, finish: 'stop' });
      expect(result.usage).toMatchObject(usage);
      expect(result.response.modelId).toBe(ROUTED_MODEL);
      expect(stack.backend.last().body).toMatchObject({ model: ROUTED_MODEL, temperature: 0.2, messages: [{ role: 'user', content: 'Hi' }] });
    }
  });

  it('streams text with usage with both providers', async () => {
    for (const [provider, model] of models()) {
      const result = streamText({ model, prompt: 'Hi', maxRetries: 0, onError: () => undefined });
      let text = '';
      for await (const delta of result.textStream) text += delta;
      expect({ provider, text }).toEqual({ provider, text: PLAIN_REPLY });
      expect(await result.usage).toMatchObject(usage);
      expect(await result.finishReason).toBe('stop');
      expect(stack.backend.last().body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    }
  });

  it('runs a tool-call round trip with generateText', async () => {
    const result = await generateText({ model: openai.chat(ROUTED_MODEL), tools: { get_weather: weather() }, stopWhen: stepCountIs(2), prompt: 'Weather in Paris?', maxRetries: 0 });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0].toolCalls[0]).toMatchObject({ toolName: 'get_weather', input: { city: 'example' } });
    expect(result.text).toBe('The tool said: {"city":"example","temperature":21}');
    expect(result.totalUsage.totalTokens).toBeGreaterThan(0);
    const callId = result.steps[0].toolCalls[0].toolCallId;
    expect(stack.backend.last().body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"example"}' } }] },
      { role: 'tool', tool_call_id: callId, content: '{"city":"example","temperature":21}' },
    ]);
  });

  it('runs a streamed tool-call round trip with both providers', async () => {
    for (const [provider, model] of models()) {
      const result = streamText({ model, tools: { get_weather: weather() }, stopWhen: stepCountIs(2), prompt: 'Weather in Paris?', maxRetries: 0, onError: () => undefined });
      expect({ provider, text: await result.text }).toEqual({ provider, text: 'The tool said: {"city":"example","temperature":21}' });
      const steps = await result.steps;
      expect(steps[0].finishReason).toBe('tool-calls');
      const sent = stack.backend.last().body.messages;
      expect(sent[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: steps[0].toolCalls[0].toolCallId, function: { name: 'get_weather' } }] });
      expect(sent[2]).toEqual({ role: 'tool', tool_call_id: steps[0].toolCalls[0].toolCallId, content: '{"city":"example","temperature":21}' });
    }
  });

  it('generates an object from a zod schema with both providers', async () => {
    for (const [provider, model] of models()) {
      const { object } = await generateObject({ model, schema: City, prompt: 'Describe Nice', maxRetries: 0 });
      expect({ provider, object }).toEqual({ provider, object: sampleCity });
      expect(stack.backend.last().body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'response', schema: { type: 'object' } } });
    }
  });

  it('sends a reasoning model the developer role and max_completion_tokens', async () => {
    const result = await generateText({
      model: openai.chat('gpt-5-mini'), system: 'Answer briefly.', prompt: 'Hi', maxOutputTokens: 64, maxRetries: 0,
      providerOptions: { openai: { reasoningEffort: 'low', serviceTier: 'flex' } },
    });
    expect(result.text).toBe(PLAIN_REPLY);
    const sent = stack.backend.last().body;
    expect(sent).toMatchObject({ model: 'gpt-5-mini', max_completion_tokens: 64, reasoning_effort: 'low', service_tier: 'flex' });
    expect(sent.messages[0]).toEqual({ role: 'developer', content: 'Answer briefly.' });
    expect(sent).not.toHaveProperty('max_tokens');
    expect(result.providerMetadata?.openai).toBeDefined();
  });

  it('sends text and image parts', async () => {
    const result = await generateText({
      model: openai.chat(ROUTED_MODEL), maxRetries: 0,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image', image: new URL('https://images.example/cat.png') }] }],
    });
    expect(result.text).toBe(PLAIN_REPLY);
    expect(stack.backend.last().body.messages[0].content).toEqual([{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://images.example/cat.png' } }]);
  });

  it('generates images as base64, asked for or not', async () => {
    const png = Buffer.from(PNG_BASE64, 'base64');
    const dalle = await generateImage({ model: openai.image('dall-e-3'), prompt: 'a lighthouse', maxRetries: 0 });
    expect(Buffer.from(dalle.image.uint8Array)).toEqual(png);
    expect(dalle.providerMetadata.openai.images[0]).toMatchObject({ revisedPrompt: revisedPrompt('a lighthouse') });
    expect(stack.backend.last('/images/generations').body).toMatchObject({ response_format: 'b64_json' });

    // gpt-image models answer base64 unasked, and the SDK sends no response_format for them.
    const gptImage = await generateImage({ model: openai.image('gpt-image-1'), prompt: 'a lighthouse', n: 2, size: '1024x1024', maxRetries: 0 });
    expect(gptImage.images.map((i) => i.base64)).toEqual([PNG_BASE64, PNG_BASE64]);
    expect(stack.backend.last('/images/generations').body).not.toHaveProperty('response_format');

    const viaCompatible = await generateImage({ model: compatible.imageModel('b64only-image'), prompt: 'a lighthouse', maxRetries: 0 });
    expect(viaCompatible.image.base64).toBe(PNG_BASE64);
  });

  it('surfaces a backend 429 as an APICallError with Retry-After', async () => {
    const err = await apiCallError(generateText({ model: openai.chat('busy-chat'), prompt: 'Hi', maxRetries: 0 }));
    expect(err.statusCode).toBe(429);
    expect(err.isRetryable).toBe(true);
    expect(err.responseHeaders?.['retry-after']).toBe('1');
    // `data` is the SDK's parse of OpenAI's error shape (message, type, param, code); the rest is in the raw body.
    expect((err.data as any)?.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    expect(JSON.parse(err.responseBody!).error).toMatchObject({ reason: 'upstream_rejected', status: 429 });
  });

  it('surfaces a content-filter refusal as an APICallError the SDK can read', async () => {
    const err = await apiCallError(generateText({ model: compatible.chatModel(ROUTED_MODEL), system: `Use the ${FORBIDDEN}.`, prompt: 'Hi', maxRetries: 0 }));
    expect(err.statusCode).toBe(400);
    expect(err.isRetryable).toBe(false);
    expect(JSON.parse(err.responseBody!).error).toMatchObject({ code: 'content_filter', type: 'invalid_request_error', reason: 'content_filter', param: 'prompt', status: 400 });
  });

  it('keeps the backend\'s system_fingerprint in the raw response', async () => {
    const result = await generateText({ model: openai.chat(ROUTED_MODEL), prompt: 'Hi', maxRetries: 0 });
    expect((result.response.body as any)?.system_fingerprint).toBe(FINGERPRINT);
  });
});
