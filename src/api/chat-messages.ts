// Chat messages by dialect. The interface's own rules are the default: roles
// system, user and assistant, content a string, nothing else. A route with
// `dialect: openai` also takes OpenAI's message forms: the developer role,
// tool results, assistant tool calls with null content, content as parts.
import { z } from 'zod';
import type { ChatMessage, ContentPart, Dialect, TextPart, ToolCall } from '../contract/types';

export type { ChatMessage, ContentPart, Dialect, TextPart, ToolCall };

const interfaceMessage = z.strictObject({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.string(),
});

const textPart = z.strictObject({ type: z.literal('text'), text: z.string() });
const imagePart = z.strictObject({
  type: z.literal('image_url'),
  image_url: z.strictObject({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const textContent = z.union([z.string(), z.array(textPart).min(1)]);
const name = z.string().min(1).max(256).optional();

export const toolCallSchema = z.strictObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.strictObject({ name: z.string().min(1), arguments: z.string() }),
});

const openaiMessage = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('system'), content: textContent, name }),
  z.strictObject({ role: z.literal('developer'), content: textContent, name }),
  z.strictObject({ role: z.literal('user'), content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, imagePart])).min(1)]), name }),
  z.strictObject({
    role: z.literal('assistant'),
    content: textContent.nullable().optional(),
    name,
    tool_calls: z.array(toolCallSchema).min(1).optional(),
    refusal: z.string().nullable().optional(),
  }).refine((m) => (m.content !== null && m.content !== undefined) || m.tool_calls !== undefined, {
    path: ['content'], message: 'content is required unless the message has tool_calls',
  }),
  z.strictObject({ role: z.literal('tool'), content: textContent, tool_call_id: z.string().min(1), name }),
]);

export const messagesSchema: Record<Dialect, z.ZodType<ChatMessage[]>> = {
  interface: z.array(interfaceMessage).min(1),
  openai: z.array(openaiMessage).min(1) as z.ZodType<ChatMessage[]>,
};



/**
 * Every string in the messages a chat template may put before the model:
 * content strings and text parts, tool calls (ids, names, arguments), tool
 * results' call ids, refusals, names. Not image URLs: the model sees the image.
 */
export function messageTexts(messages: readonly ChatMessage[], out: string[]): void {
  for (const m of messages) {
    const content = m.content;
    if (typeof content === 'string') out.push(content);
    else if (Array.isArray(content)) for (const part of content) if (part.type === 'text') out.push(part.text);
    if (m.tool_calls) for (const call of m.tool_calls) out.push(call.id, call.function.name, call.function.arguments);
    if (typeof m.refusal === 'string') out.push(m.refusal);
    if (m.name !== undefined) out.push(m.name);
    if (m.tool_call_id !== undefined) out.push(m.tool_call_id);
  }
}
