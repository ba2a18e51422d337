// The text a traced request forwarded and got back, in the GenAI
// conventions' message form (gen_ai.input.messages, gen_ai.output.messages):
// [{ role, parts: [{ type: 'text', content }, { type: 'tool_call', ... }] }].
// Written only with captureContent, from the request as it was forwarded
// (after the content filter and every rewrite) and the answer as it was sent.
// The texts are bounded together (MAX_CAPTURED_CHARS): what is past the
// bound is left out, and the JSON stays whole.
import type { ChatMessage, ChatRequest, ImageRequest } from '../contract/types';
import { MAX_CAPTURED_CHARS } from './answer';

type Part =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_call_response'; id: string; response: string };

interface Message { role: string; parts: Part[]; finish_reason?: string }

/** Hands out what is left of the bound, text by text. */
class Budget {
  constructor(private left = MAX_CAPTURED_CHARS) {}

  take(text: string): string {
    const kept = text.slice(0, Math.max(0, this.left));
    this.left -= kept.length;
    return kept;
  }
}

function partsOf(m: ChatMessage, budget: Budget): Part[] {
  const parts: Part[] = [];
  if (m.role === 'tool') {
    const text = typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');
    return [{ type: 'tool_call_response', id: m.tool_call_id ?? '', response: budget.take(text) }];
  }
  if (typeof m.content === 'string') parts.push({ type: 'text', content: budget.take(m.content) });
  else for (const p of m.content ?? []) if (p.type === 'text') parts.push({ type: 'text', content: budget.take(p.text) });
  for (const call of m.tool_calls ?? []) parts.push({ type: 'tool_call', id: call.id, name: call.function.name, arguments: budget.take(call.function.arguments) });
  return parts;
}

/** gen_ai.input.messages: the conversation (or an image prompt) as forwarded. */
export function inputMessages(chat: ChatRequest | undefined, image: ImageRequest | undefined): string | undefined {
  const budget = new Budget();
  if (chat !== undefined) return JSON.stringify(chat.messages.map((m): Message => ({ role: m.role, parts: partsOf(m, budget) })));
  if (image !== undefined) return JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: budget.take(image.prompt) }] }]);
  return undefined;
}

/** gen_ai.output.messages: the answer's text as sent back, with its first finish reason. */
export function outputMessages(text: string, finishReasons: readonly string[]): string {
  const message: Message = { role: 'assistant', parts: [{ type: 'text', content: text }] };
  if (finishReasons.length > 0) message.finish_reason = finishReasons[0];
  return JSON.stringify([message]);
}
