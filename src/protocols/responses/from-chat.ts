// A chat-completions JSON answer as a Responses answer. The first choice's
// reasoning (reasoning_content, or reasoning on some servers) becomes a
// reasoning item, its text a message, its tool calls function_call items
// (a namespaced function named back) or custom_tool_call items (a call to a
// custom tool, its input read out of the arguments), in that order.
//
//   const { body, usage } = fromChatJson(await upstream.json(), { id: newResponseId(), createdAt, model, request });
import { GatewayError } from '../../contract/errors';
import { isObject, type Json } from '../json';
import { chatUsage, type ProtocolUsage } from '../usage';
import { customInput } from './custom-tools';
import { customCallItem, functionCallItem, itemStatusOf, messageItem, newId, outcomeOf, reasoningItem, responseObject } from './output';
import { offeredTools, toolNames } from './tools';
import type { OutputItem, ResponseMeta, ResponseObject } from './types';

const stringOr = (v: unknown, fallback: string): string => (typeof v === 'string' ? v : fallback);

/** The reasoning text of a chat message or delta: vLLM and SGLang send reasoning_content, some servers reasoning. */
export const reasoningOf = (m: Json): string => stringOr(m.reasoning_content, stringOr(m.reasoning, ''));

export function fromChatJson(chat: unknown, meta: ResponseMeta): { body: ResponseObject; usage: ProtocolUsage | undefined } {
  const choice = isObject(chat) && Array.isArray(chat.choices) ? chat.choices[0] : undefined;
  if (!isObject(choice)) throw new GatewayError('upstream_error', 'The backend answered without a choice.');
  const message = isObject(choice.message) ? choice.message : {};
  const makeId = meta.newId ?? newId;
  const outcome = outcomeOf(choice.finish_reason);
  const status = itemStatusOf(outcome);
  const output: OutputItem[] = [];

  const reasoning = reasoningOf(message);
  if (reasoning !== '') output.push(reasoningItem(makeId('rs'), reasoning));
  const text = stringOr(message.content, '');
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter((c) => isObject(c) && isObject(c.function)) as Json[] : [];
  // A message when there is text, or when there would be no output at all (an empty answer is an empty message).
  if (text !== '' || (calls.length === 0 && output.length === 0)) output.push(messageItem(makeId('msg'), text, status));
  const names = toolNames(offeredTools(meta.request, meta.history));
  for (const call of calls) {
    const fn = call.function as Json;
    const tool = names.get(stringOr(fn.name, '')) ?? { name: stringOr(fn.name, '') };
    const callId = typeof call.id === 'string' && call.id !== '' ? call.id : makeId('call');
    const args = stringOr(fn.arguments, '');
    output.push(tool.custom ? customCallItem(makeId('ctc'), callId, tool, customInput(args), status) : functionCallItem(makeId('fc'), callId, tool, args, status));
  }

  const usage = chatUsage((chat as Json).usage);
  return { body: responseObject(meta, outcome.status, { output, usage, incomplete_details: outcome.incomplete_details }), usage };
}
