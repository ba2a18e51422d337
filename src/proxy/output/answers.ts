// Output rules on JSON answers, checked whole, in the client's protocol: a
// chat completion's choices (also a chat backend's answer on its way to a
// Responses or Messages client, whose translation then says content_filter
// its own way), a Responses object's output items, a Messages answer's
// content blocks. A mask replaces the match; a block keeps what came before
// it, drops what came after, and ends the answer as the protocol says a
// filter ended it (chat: finish_reason content_filter; Responses: status
// incomplete, reason content_filter; Messages: stop_reason refusal).
import type { Context } from '../../pipeline/context';
import { rewriteStrings } from '../../request/rewrite-strings';
import { ChatOutput } from './chat';
import { OutputText, type PartKind } from './text';

type Loose = Record<string, any>;

const isRecord = (v: unknown): v is Loose => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The stream side: the request's output rules over chat chunks, or undefined when it has none. */
export function chatOutputOf(ctx: Context): ChatOutput | undefined {
  const policy = ctx.forwarding.output;
  return policy === undefined ? undefined : new ChatOutput(new OutputText(policy, ctx.forwarding));
}

/** A fresh check for one whole answer part (each choice is decided on its own). */
const checker = (ctx: Context): OutputText => new OutputText(ctx.forwarding.output!, ctx.forwarding);

/** A chat message's text fields, in the order a stream carries them, and their kinds. */
const MESSAGE_TEXTS: ReadonlyArray<readonly [string, PartKind]> = [['reasoning_content', 'reasoning'], ['reasoning', 'reasoning'], ['content', 'text'], ['refusal', 'text']];

/** A chat completion's choices with the rules applied (reasoning, content and refusal, then each tool call's arguments). */
export function checkChatJson(ctx: Context, choices: unknown[]): unknown[] {
  return choices.map((raw) => {
    if (!isRecord(raw) || !isRecord(raw.message)) return raw;
    const out = checker(ctx);
    const message: Loose = { ...raw.message };
    for (const [field, kind] of MESSAGE_TEXTS) if (typeof message[field] === 'string') message[field] = out.whole(message[field], kind);
    if (Array.isArray(message.tool_calls)) {
      const kept: unknown[] = [];
      for (const call of message.tool_calls) {
        if (out.blocked !== undefined) break;
        const args = call?.function?.arguments;
        if (typeof args !== 'string') { kept.push(call); continue; }
        const checked = out.whole(args, 'json');
        if (out.blocked === undefined) kept.push(checked === args ? call : { ...call, function: { ...call.function, arguments: checked } });
      }
      if (kept.length > 0) message.tool_calls = kept;
      else delete message.tool_calls;
    }
    return out.blocked === undefined ? { ...raw, message } : { ...raw, message, finish_reason: 'content_filter' };
  });
}

/** A chat backend's JSON answer (parsed, the caller's own object), checked in place before it is translated. */
export function checkChatAnswer(ctx: Context, body: unknown): void {
  if (ctx.forwarding.output !== undefined && isRecord(body) && Array.isArray(body.choices)) body.choices = checkChatJson(ctx, body.choices);
}

/** A Responses object from a backend that serves the API: its messages' text and its calls' arguments, in output order. */
export function checkResponseJson(ctx: Context, body: unknown): void {
  if (ctx.forwarding.output === undefined || !isRecord(body) || !Array.isArray(body.output)) return;
  const out = checker(ctx);
  const output: unknown[] = [];
  for (const item of body.output) {
    if (!isRecord(item)) { output.push(item); continue; }
    if (item.type === 'function_call' && typeof item.arguments === 'string') {
      const args = out.whole(item.arguments);
      if (out.blocked !== undefined) break;
      output.push({ ...item, arguments: args });
    } else if (item.type === 'message' && Array.isArray(item.content)) {
      const content = item.content.map((part: unknown) => (isRecord(part) && part.type === 'output_text' && typeof part.text === 'string' ? { ...part, text: out.whole(part.text) } : part));
      output.push(out.blocked === undefined ? { ...item, content } : { ...item, content, status: 'incomplete' });
    } else output.push(item);
    if (out.blocked !== undefined) break;
  }
  body.output = output;
  if (out.blocked !== undefined) Object.assign(body, { status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
}

/** A Messages answer from a backend that serves the API: its text blocks, and the strings of its tool calls' input. */
export function checkMessageJson(ctx: Context, body: unknown): void {
  if (ctx.forwarding.output === undefined || !isRecord(body) || !Array.isArray(body.content)) return;
  const out = checker(ctx);
  const content: unknown[] = [];
  for (const block of body.content) {
    if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') {
      const text = out.whole(block.text);
      if (out.blocked === undefined || text !== '') content.push({ ...block, text });
    } else if (isRecord(block) && block.type === 'tool_use') {
      const input = rewriteStrings(block.input, (s) => out.whole(s), true);
      if (out.blocked === undefined) content.push(input === block.input ? block : { ...block, input });
    } else content.push(block);
    if (out.blocked !== undefined) break;
  }
  body.content = content;
  if (out.blocked !== undefined) Object.assign(body, { stop_reason: 'refusal', stop_sequence: null });
}
