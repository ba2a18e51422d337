// The OpenAI Agents SDK (@openai/agents) as its docs say, through the
// gateway: an agent with one function tool, run to its final output on the
// Responses API (the SDK's default), JSON and streamed, against a chat-only
// backend (translated) and one that serves the API itself (relayed). The
// backend calls the tool, the SDK runs it and sends its result back, and the
// backend's answer quotes it.
import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents';
import { z } from 'zod';
import { NATIVE_MODEL, RESPONSES_ROUTES, startResponsesStack, type ResponsesStack } from '../../support/responses-stack';

describe.each(RESPONSES_ROUTES)('OpenAI Agents SDK through the gateway, %s backend', (_kind, model) => {
  let stack: ResponsesStack;
  let runner: Runner;
  const ran: unknown[] = [];
  const getWeather = tool({
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: z.object({ city: z.string(), celsius: z.boolean() }),
    execute: async (args) => { ran.push(args); return `${args.city}: 21 degrees`; },
  });

  beforeAll(async () => {
    stack = await startResponsesStack();
    runner = new Runner({ modelProvider: new OpenAIProvider({ apiKey: stack.key, baseURL: stack.baseURL, useResponses: true }), tracingDisabled: true });
  });
  afterAll(() => stack?.close());
  beforeEach(() => { ran.length = 0; });

  const agent = () => new Agent({ name: 'Weather', instructions: 'Use the tool, then answer.', model, tools: [getWeather] });

  function expectToolRound(finalOutput: unknown): void {
    expect(ran).toEqual([{ city: 'example', celsius: true }]);
    expect(finalOutput).toBe('The tool said: example: 21 degrees');
    // The second turn carried the call and its output to the backend.
    const sent = stack.lastBody(model);
    if (model === NATIVE_MODEL) {
      expect(sent.input.map((i: any) => i.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_output']);
      expect(sent.tools).toEqual([expect.objectContaining({ type: 'function', name: 'get_weather' })]);
    } else {
      expect(sent.messages.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
      expect(sent.tools).toEqual([expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'get_weather' }) })]);
    }
  }

  it('runs an agent with one function tool to its final output', async () => {
    const result = await runner.run(agent(), 'Weather in Paris?');
    expectToolRound(result.finalOutput);
  });

  it('runs it streamed', async () => {
    const result = await runner.run(agent(), 'Weather in Paris?', { stream: true });
    let text = '';
    for await (const event of result) {
      if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') text += event.data.delta;
    }
    await result.completed;
    expectToolRound(result.finalOutput);
    expect(text).toBe('The tool said: example: 21 degrees');
  });
});
