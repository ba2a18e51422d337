// A chat-completions JSON answer as a Messages answer: reasoning as a thinking
// block, then the text, then each tool call as a tool_use block; finish_reason
// as stop_reason; the usage with cached tokens apart. Only the first choice is read.
//
//   const { body, usage } = fromChatJson(JSON.parse(text), { id: 'msg_…', model: req.model });
import { GatewayError } from '../../contract/errors';
import { estimateTokens } from '../../request/usage';
import type { ProtocolUsage } from '../usage';
import { reasoningOf, stopReasonOf, stopSequenceOf, toolInput, usageOf } from './answer';
import type { ContentBlock, Message } from './types';

export interface AnswerMeta {
  /** The message id to give the answer (`msg_…`). */
  id: string;
  /** The model id the client asked for, echoed as Messages echoes it. */
  model: string;
  /** The prompt's estimated tokens, shown when the backend reports no usage. */
  inputTokens?: number;
}

export interface MessagesAnswer {
  body: Message;
  /** What the backend reported; undefined when it reported nothing (the caller estimates). */
  usage: ProtocolUsage | undefined;
}

/** A tool call's id when the backend gave none: unique within the answer, and stable for the same answer. */
export const toolUseId = (meta: Pick<AnswerMeta, 'id'>, n: number): string => `toolu_${meta.id}_${n}`;

export function fromChatJson(completion: unknown, meta: AnswerMeta): MessagesAnswer {
  const choice = firstChoice(completion);
  const message = choice.message as Record<string, unknown>;
  const content: ContentBlock[] = [];
  const reasoning = reasoningOf(message);
  if (reasoning !== undefined) content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  const text = textOf(message.content) + (typeof message.refusal === 'string' ? message.refusal : '');
  if (text !== '') content.push({ type: 'text', text });
  let chars = (reasoning ?? '').length + text.length;
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls as { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[] : [];
  calls.forEach((call, n) => {
    const fn = call?.function ?? {};
    const args = typeof fn.arguments === 'string' ? fn.arguments : '';
    chars += args.length;
    content.push({
      type: 'tool_use',
      id: typeof call?.id === 'string' && call.id !== '' ? call.id : toolUseId(meta, n),
      name: typeof fn.name === 'string' ? fn.name : '',
      input: toolInput(args),
    });
  });
  const stopSequence = stopSequenceOf(choice);
  const read = usageOf((completion as Record<string, unknown>).usage);
  const body: Message = {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content,
    stop_reason: stopReasonOf(choice.finish_reason, stopSequence, calls.length > 0),
    stop_sequence: stopSequence,
    usage: read?.body ?? { input_tokens: meta.inputTokens ?? 0, output_tokens: estimateTokens(chars), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
  return { body, usage: read?.usage };
}

function firstChoice(completion: unknown): Record<string, unknown> {
  const choices = completion !== null && typeof completion === 'object' ? (completion as { choices?: unknown }).choices : undefined;
  const choice: unknown = Array.isArray(choices) ? choices[0] : undefined;
  const message = choice !== null && typeof choice === 'object' ? (choice as { message?: unknown }).message : undefined;
  if (message === null || typeof message !== 'object') {
    throw new GatewayError('upstream_error', 'The model backend sent an answer without a message (no choices[0].message). Try again; if it keeps failing, tell the gateway operator.');
  }
  return choice as Record<string, unknown>;
}

/** A message's content: a string, or (on some servers) text parts. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content) if (typeof part?.text === 'string') text += part.text;
  return text;
}
