// The official openai client's Responses API (responses.create, .stream,
// .parse, .retrieve, .inputItems, .delete), used as its docs say, through the
// gateway to a chat-only backend (translated) and to one that serves the API
// itself (relayed): text, a function-tool round trip continued with
// previous_response_id, and structured output, each JSON and streamed.
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { PLAIN_REPLY } from '../../support/openai-answers';
import { NATIVE_MODEL, RESPONSES_ROUTES, startResponsesStack, type ResponsesStack } from '../../support/responses-stack';

const weatherTool: OpenAI.Responses.FunctionTool = {
  type: 'function', name: 'get_weather', description: 'Current weather in a city', strict: true,
  parameters: { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'boolean' } }, required: ['city', 'celsius'], additionalProperties: false },
};
const Event = z.object({ name: z.string(), attendees: z.array(z.string()), day: z.number().int() });

describe.each(RESPONSES_ROUTES)('openai SDK Responses API through the gateway, %s backend', (_kind, model) => {
  let stack: ResponsesStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startResponsesStack();
    client = new OpenAI({ baseURL: stack.baseURL, apiKey: stack.key, maxRetries: 0, timeout: 5000 });
  });
  afterAll(() => stack?.close());

  it('answers text with responses.create', async () => {
    const response = await client.responses.create({ model, input: 'Hi', instructions: 'Be brief.' });
    expect(response).toMatchObject({ object: 'response', status: 'completed', model, instructions: 'Be brief.', error: null });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe(PLAIN_REPLY);
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('streams text with responses.stream, event by event', async () => {
    const stream = client.responses.stream({ model, input: 'Hi' });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    const response = await stream.finalResponse();
    expect(text).toBe(PLAIN_REPLY);
    expect(response.output_text).toBe(PLAIN_REPLY);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types.at(-1)).toBe('response.completed');
    expect(types.filter((t) => t === 'response.output_text.delta').length).toBeGreaterThan(1);
  });

  it.each([false, true])('runs a function-tool round trip continued with previous_response_id (stream: %s)', async (streamed) => {
    const ask = (params: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'stream'>): Promise<OpenAI.Responses.Response> =>
      (streamed ? client.responses.stream(params).finalResponse() : client.responses.create(params));
    const first = await ask({ model, input: 'Weather in Paris?', tools: [weatherTool] });
    const call = first.output.find((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call')!;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(JSON.parse(call.arguments)).toEqual({ city: 'example', celsius: true });

    const second = await ask({ model, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temperature":21}' }], tools: [weatherTool] });
    expect(second.output_text).toBe('The tool said: {"temperature":21}');
    expect(second.previous_response_id).toBe(first.id);
    // The gateway kept the first turn: the backend got the whole conversation.
    const sent = stack.lastBody(model);
    if (model === NATIVE_MODEL) {
      expect(sent).toMatchObject({ store: false, model });
      expect(sent).not.toHaveProperty('previous_response_id');
      expect(sent.input.map((i: any) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);
      expect(sent.input[1]).toMatchObject({ call_id: call.call_id, name: 'get_weather' });
    } else {
      // The stored first turn's string input is a message of one text part.
      expect(sent.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: call.call_id, type: 'function', function: { name: 'get_weather', arguments: call.arguments } }] },
        { role: 'tool', tool_call_id: call.call_id, content: '{"temperature":21}' },
      ]);
    }
  });

  it('answers structured output with responses.parse and responses.stream', async () => {
    const text = { format: zodTextFormat(Event, 'event') };
    const parsed = await client.responses.parse({ model, input: 'Alice and Bob meet on day 3', text });
    expect(parsed.output_parsed).toEqual({ name: 'example', attendees: ['example'], day: 1 });
    expect(parsed.text?.format).toMatchObject({ type: 'json_schema', name: 'event', strict: true });
    const streamed = await client.responses.stream({ model, input: 'Alice and Bob meet on day 3', text }).finalResponse();
    expect(streamed.output_parsed).toEqual({ name: 'example', attendees: ['example'], day: 1 });
    if (model !== NATIVE_MODEL) expect(stack.lastBody(model).response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'event', strict: true } });
  });

  it('retrieves a stored response, lists its input items and deletes it', async () => {
    const created = await client.responses.create({ model, input: [{ role: 'user', content: 'Hi' }] });
    expect(await client.responses.retrieve(created.id)).toMatchObject({ id: created.id, status: 'completed', output_text: PLAIN_REPLY });
    const items = await client.responses.inputItems.list(created.id);
    expect(items.data).toEqual([expect.objectContaining({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] })]);
    await client.responses.delete(created.id);
    await expect(client.responses.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
  });
});
