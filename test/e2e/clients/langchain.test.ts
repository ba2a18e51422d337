// LangChain's ChatOpenAI, used as its docs say, against the gateway: invoke,
// stream (which asks for usage by default), bindTools round trips,
// withStructuredOutput in its three methods, reasoning models, content parts
// and the errors LangChain classifies from an OpenAI-style body.
import { AIMessageChunk, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { ContextOverflowError } from '@langchain/core/errors';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI, type ChatOpenAIFields } from '@langchain/openai';
import { z } from 'zod';
import { FORBIDDEN, ROUTED_MODEL, startClientStack, type ClientStack } from '../../support/client-stack';
import { FINGERPRINT, PLAIN_REPLY, PLAIN_USAGE } from '../../support/openai-answers';

const usage = { input_tokens: PLAIN_USAGE.prompt_tokens, output_tokens: PLAIN_USAGE.completion_tokens, total_tokens: PLAIN_USAGE.total_tokens };
const toolAnswer = 'The tool said: {"city":"example","temperature":21}';

const getWeather = tool(async ({ city }) => JSON.stringify({ city, temperature: 21 }), {
  name: 'get_weather',
  description: 'Current weather in a city',
  schema: z.object({ city: z.string() }),
});

async function gather(stream: AsyncIterable<AIMessageChunk>): Promise<AIMessageChunk> {
  let all: AIMessageChunk | undefined;
  for await (const chunk of stream) all = all ? all.concat(chunk) : chunk;
  return all!;
}

describe('LangChain ChatOpenAI through the gateway', () => {
  let stack: ClientStack;
  const chat = (fields: ChatOpenAIFields = {}) => new ChatOpenAI({ model: ROUTED_MODEL, apiKey: stack.key, configuration: { baseURL: stack.baseURL }, maxRetries: 0, ...fields });

  beforeAll(async () => { stack = await startClientStack(); });
  afterAll(() => stack?.close());

  it('invokes', async () => {
    const answer = await chat({ temperature: 0.3 }).invoke('Hi');
    expect(answer.content).toBe(PLAIN_REPLY);
    expect(answer.usage_metadata).toMatchObject(usage);
    expect(answer.response_metadata).toMatchObject({ finish_reason: 'stop', system_fingerprint: FINGERPRINT });
    expect(stack.backend.last().body).toMatchObject({ model: ROUTED_MODEL, temperature: 0.3, messages: [{ role: 'user', content: 'Hi' }] });
  });

  it('streams with usage, as it asks for by default', async () => {
    const all = await gather(await chat().stream('Hi'));
    expect(all.content).toBe(PLAIN_REPLY);
    expect(all.usage_metadata).toMatchObject(usage);
    expect(stack.backend.last().body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('runs a bindTools round trip', async () => {
    const llm = chat().bindTools([getWeather]);
    const messages: BaseMessage[] = [new HumanMessage('Weather in Paris?')];
    const ai = await llm.invoke(messages);
    expect(ai.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'example' }, id: expect.any(String) })]);
    messages.push(ai, await getWeather.invoke(ai.tool_calls![0]));
    const final = await llm.invoke(messages);
    expect(final.content).toBe(toolAnswer);
    const sent = stack.backend.last().body.messages;
    expect(sent[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: ai.tool_calls![0].id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"example"}' } }] });
    // LangChain names the tool on its result message; OpenAI accepts that.
    expect(sent[2]).toEqual({ role: 'tool', tool_call_id: ai.tool_calls![0].id, content: '{"city":"example","temperature":21}', name: 'get_weather' });
  });

  it('runs a streamed bindTools round trip', async () => {
    const llm = chat().bindTools([getWeather]);
    const messages: BaseMessage[] = [new HumanMessage('Weather in Paris?')];
    const ai = await gather(await llm.stream(messages));
    expect(ai.tool_call_chunks!.length).toBeGreaterThan(0);
    expect(ai.tool_calls).toEqual([expect.objectContaining({ name: 'get_weather', args: { city: 'example' } })]);
    messages.push(ai, await getWeather.invoke(ai.tool_calls![0]));
    const final = await gather(await llm.stream(messages));
    expect(final.content).toBe(toolAnswer);
    expect(final.usage_metadata?.total_tokens).toBeGreaterThan(0);
    expect(stack.backend.last().body.messages[2]).toMatchObject({ role: 'tool', tool_call_id: ai.tool_calls![0].id });
  });

  it('returns structured output by JSON schema, by function calling and in JSON mode', async () => {
    const Person = z.object({ name: z.string(), age: z.number().int(), languages: z.array(z.string()) });
    const person = { name: 'example', age: 1, languages: ['example'] };
    expect(await chat().withStructuredOutput(Person, { name: 'person' }).invoke('Who is Ada?')).toEqual(person);
    expect(stack.backend.last().body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'person' } });

    expect(await chat().withStructuredOutput(Person, { name: 'person', method: 'functionCalling' }).invoke('Who is Ada?')).toEqual(person);
    expect(stack.backend.last().body).toMatchObject({ tools: [{ type: 'function', function: { name: 'person' } }], tool_choice: { type: 'function', function: { name: 'person' } } });

    const Answer = z.object({ answer: z.string() });
    expect(await chat().withStructuredOutput(Answer, { method: 'jsonMode' }).invoke('Answer in JSON')).toEqual({ answer: 'example' });
    expect(stack.backend.last().body.response_format).toEqual({ type: 'json_object' });
  });

  it('sends a reasoning model the developer role, max_completion_tokens and reasoning_effort', async () => {
    const answer = await chat({ model: 'o3-mini', maxTokens: 64, reasoning: { effort: 'low' } }).invoke([new SystemMessage('Answer briefly.'), new HumanMessage('Hi')]);
    expect(answer.content).toBe(PLAIN_REPLY);
    const sent = stack.backend.last().body;
    expect(sent).toMatchObject({ model: 'o3-mini', max_completion_tokens: 64, reasoning_effort: 'low' });
    expect(sent.messages[0]).toEqual({ role: 'developer', content: 'Answer briefly.' });
    expect(sent).not.toHaveProperty('max_tokens');
  });

  it('sends text and image_url parts', async () => {
    const content = [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://images.example/cat.png' } }];
    expect((await chat().invoke([new HumanMessage({ content })])).content).toBe(PLAIN_REPLY);
    expect(stack.backend.last().body.messages[0]).toEqual({ role: 'user', content });
  });

  it('classifies a backend 429 as a rate limit, with Retry-After', async () => {
    const err: any = await chat({ model: 'busy-chat' }).invoke('Hi').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, lc_error_code: 'MODEL_RATE_LIMIT', code: 'rate_limit_exceeded' });
    expect(err.headers?.get('retry-after')).toBe('1');
  });

  it('classifies a backend context-length refusal as a ContextOverflowError', async () => {
    const err = await chat({ model: 'ctxlen-chat' }).invoke('a very long prompt').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextOverflowError);
  });

  it('is refused by the content filter for forbidden text in a tool result', async () => {
    const llm = chat().bindTools([getWeather]);
    const ai = await llm.invoke([new HumanMessage('Weather in Paris?')]);
    const before = stack.backend.requests.length;
    const forbidden = await getWeather.invoke({ ...ai.tool_calls![0], args: { city: `the ${FORBIDDEN}` } });
    const err: any = await llm.invoke([new HumanMessage('Weather in Paris?'), ai, forbidden]).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, code: 'content_filter', type: 'invalid_request_error' });
    expect(stack.backend.requests.length).toBe(before);
  });
});
