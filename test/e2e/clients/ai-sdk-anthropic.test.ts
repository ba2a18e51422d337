// The Vercel AI SDK's Anthropic provider (@ai-sdk/anthropic), used as its
// docs say, against the gateway's Messages API on a translated and a native
// backend: generateText and streamText, each with a tool the SDK runs
// between the two steps of the scripted conversation.
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { FINAL_PREFIX, PLAIN_ANSWER, PREAMBLE } from '../../support/agent-script';
import { MODES, startMessagesStack, type MessagesStack } from '../../support/messages-stack';

const READ_PATH = '/work/project/notes.txt';
const CONTENT = 'Notes: ship on Friday.';

describe.each(MODES)('AI SDK Anthropic provider through the gateway, %s backend', (mode, modelId) => {
  let stack: MessagesStack;
  let anthropic: ReturnType<typeof createAnthropic>;
  const reads: string[] = [];
  const Read = () => tool({
    description: 'Reads a file',
    inputSchema: z.object({ file_path: z.string() }),
    execute: async ({ file_path }) => { reads.push(file_path); return CONTENT; },
  });

  beforeAll(async () => {
    stack = await startMessagesStack({ command: 'true', readPath: READ_PATH });
    anthropic = createAnthropic({ baseURL: `${stack.gw.url}/v1`, apiKey: stack.key });
  });
  afterAll(() => stack?.close());
  beforeEach(() => { reads.length = 0; });

  it('generateText: plain text with usage', async () => {
    const result = await generateText({ model: anthropic(modelId), prompt: 'Hi', maxRetries: 0, maxOutputTokens: 1024 });
    expect({ text: result.text, finish: result.finishReason }).toEqual({ text: PLAIN_ANSWER, finish: 'stop' });
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(result.response.modelId).toBe(modelId);
  });

  it('generateText with a tool: the tool runs, its result goes back, the answer quotes it', async () => {
    const result = await generateText({ model: anthropic(modelId), prompt: 'Read my notes', tools: { Read: Read() }, stopWhen: stepCountIs(2), maxRetries: 0, maxOutputTokens: 1024 });
    expect(reads).toEqual([READ_PATH]);
    expect(result.steps.map((s) => s.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(result.steps[0].text).toBe(PREAMBLE);
    expect(result.text).toContain(FINAL_PREFIX);
    expect(result.text).toContain(CONTENT);
  });

  it('streamText with a tool: text as it comes, the tool between the steps', async () => {
    const result = streamText({ model: anthropic(modelId), prompt: 'Read my notes', tools: { Read: Read() }, stopWhen: stepCountIs(2), maxRetries: 0, maxOutputTokens: 1024, onError: () => undefined });
    const pieces: string[] = [];
    for await (const delta of result.textStream) pieces.push(delta);
    expect(reads).toEqual([READ_PATH]);
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.join('')).toBe(`${PREAMBLE}${FINAL_PREFIX}\n${CONTENT}`);
    expect(await result.finishReason).toBe('stop');
    expect((await result.totalUsage).outputTokens).toBeGreaterThan(0);
    const turns = stack.backend.requests.slice(-2);
    expect(turns.map((t) => t.url)).toEqual(mode === 'native' ? ['/v1/messages', '/v1/messages'] : ['/v1/chat/completions', '/v1/chat/completions']);
    expect(turns.map((t) => t.body.stream)).toEqual([true, true]);
  });
});
