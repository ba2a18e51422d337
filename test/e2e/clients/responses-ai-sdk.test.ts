// The AI SDK's default OpenAI model, `openai(model)`, speaks the Responses
// API: generateText and streamText through the gateway, against a chat-only
// backend (translated) and one that serves the API itself (relayed).
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { PLAIN_REPLY } from '../../support/openai-answers';
import { NATIVE_MODEL, RESPONSES_ROUTES, startResponsesStack, type ResponsesStack } from '../../support/responses-stack';

describe.each(RESPONSES_ROUTES)('AI SDK openai(model) through the gateway, %s backend', (_kind, model) => {
  let stack: ResponsesStack;
  let openai: ReturnType<typeof createOpenAI>;

  beforeAll(async () => {
    stack = await startResponsesStack();
    openai = createOpenAI({ baseURL: stack.baseURL, apiKey: stack.key });
  });
  afterAll(() => stack?.close());

  const reachedBackend = () => (model === NATIVE_MODEL ? stack.native.requests : stack.chat.requests).length;

  it('generates text', async () => {
    const before = reachedBackend();
    const result = await generateText({ model: openai(model), system: 'Be brief.', prompt: 'Hi', maxRetries: 0 });
    expect(result.text).toBe(PLAIN_REPLY);
    expect(result.finishReason).toBe('stop');
    expect(result.usage.totalTokens).toBeGreaterThan(0);
    expect(result.response.modelId).toBe(model);
    expect(result.response.id).toMatch(/^resp_/);
    expect(reachedBackend()).toBe(before + 1);
  });

  it('streams text', async () => {
    const result = streamText({ model: openai(model), prompt: 'Hi', maxRetries: 0, onError: () => undefined });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.join('')).toBe(PLAIN_REPLY);
    expect(deltas.length).toBeGreaterThan(1);
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).totalTokens).toBeGreaterThan(0);
  });
});
