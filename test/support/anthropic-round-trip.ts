// The agent script's two Messages turns, played by Anthropic's SDK: the first
// answer asks for one Read of `readPath` (after the preamble), the second,
// given the tool's result, quotes it. Shared by the suites that run the SDK
// against the agent backend directly and through the gateway.
import type Anthropic from '@anthropic-ai/sdk';
import { FINAL_PREFIX, PREAMBLE } from './agent-script';

export const READ_TOOL: Anthropic.Tool = { name: 'Read', description: 'Reads a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } };
export const READ_QUESTION: Anthropic.MessageParam = { role: 'user', content: 'Read the secret' };

/** `ask` sends the conversation (with READ_TOOL offered); `result` is the tool result's content. Returns the tool_use block. */
export async function readRoundTrip(ask: (messages: Anthropic.MessageParam[]) => Promise<Anthropic.Message>, readPath: string, result: string | Anthropic.TextBlockParam[]): Promise<Anthropic.ToolUseBlock> {
  const first = await ask([READ_QUESTION]);
  expect(first.stop_reason).toBe('tool_use');
  expect(first.content).toEqual([
    expect.objectContaining({ type: 'text', text: PREAMBLE }),
    expect.objectContaining({ type: 'tool_use', name: 'Read', input: { file_path: readPath } }),
  ]);
  const use = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
  const second = await ask([READ_QUESTION, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: result }] }]);
  const text = typeof result === 'string' ? result : result.map((b) => b.text).join('');
  expect(second.stop_reason).toBe('end_turn');
  expect(second.content).toEqual([expect.objectContaining({ type: 'text', text: `${FINAL_PREFIX}\n${text}` })]);
  return use;
}
