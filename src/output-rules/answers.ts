// Output rules on chat JSON answers, checked whole: a chat completion's
// choices (also a chat backend's answer on its way to a Responses or
// Messages client, whose translation then says content_filter its own way).
// A mask replaces the match; a block keeps what came before it, drops what
// came after, and ends the choice with finish_reason content_filter. A
// native Responses or Messages answer: native-answers.ts.
import type { Context } from '../pipeline/context';
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
