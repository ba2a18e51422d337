// The pieces of a Responses answer, shared by the JSON and the streamed
// translation so both build the same object: ids, output items, the status a
// chat finish_reason means, usage, and the response object with the request
// fields OpenAI echoes (defaults where the request left them out).
import { randomBytes } from 'node:crypto';
import type { ProtocolUsage } from '../usage';
import type { ToolName } from './tools';
import type {
  ItemStatus, OutputCustomToolCall, OutputFunctionCall, OutputItem, OutputMessage, OutputReasoning, OutputTextPart, ResponseMeta, ResponseObject, ResponseStatus, ResponsesUsage,
} from './types';

/** An id in OpenAI's form: a kind prefix and 48 hex digits (resp_…, msg_…, fc_…, ctc_…, rs_…, call_…). */
export const newId = (prefix: string): string => `${prefix}_${randomBytes(24).toString('hex')}`;
export const newResponseId = (): string => newId('resp');

export const outputText = (text: string): OutputTextPart => ({ type: 'output_text', annotations: [], logprobs: [], text });

export const messageItem = (id: string, text: string, status: ItemStatus): OutputMessage =>
  ({ id, type: 'message', status, content: [outputText(text)], role: 'assistant' });

export const reasoningItem = (id: string, text: string): OutputReasoning =>
  ({ id, type: 'reasoning', summary: text === '' ? [] : [{ type: 'summary_text', text }] });

export function functionCallItem(id: string, callId: string, fn: ToolName, args: string, status: ItemStatus): OutputFunctionCall {
  const item: OutputFunctionCall = { id, type: 'function_call', status, arguments: args, call_id: callId, name: fn.name };
  if (fn.namespace !== undefined) item.namespace = fn.namespace;
  return item;
}

export function customCallItem(id: string, callId: string, tool: ToolName, input: string, status: ItemStatus): OutputCustomToolCall {
  const item: OutputCustomToolCall = { id, type: 'custom_tool_call', status, call_id: callId, name: tool.name, input };
  if (tool.namespace !== undefined) item.namespace = tool.namespace;
  return item;
}

export interface Outcome { status: 'completed' | 'incomplete'; incomplete_details: ResponseObject['incomplete_details'] }

/** A chat finish_reason as a response status: cut off by the token cap or a filter is incomplete; anything else completed. */
export function outcomeOf(finishReason: unknown): Outcome {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export const itemStatusOf = (outcome: Outcome): ItemStatus => (outcome.status === 'completed' ? 'completed' : 'incomplete');

export function responsesUsage(u: ProtocolUsage): ResponsesUsage {
  return {
    input_tokens: u.input_tokens,
    input_tokens_details: { cached_tokens: u.cached_input_tokens ?? 0 },
    output_tokens: u.output_tokens,
    output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
    total_tokens: u.input_tokens + u.output_tokens,
  };
}

export interface Ending {
  output: OutputItem[];
  usage?: ProtocolUsage;
  incomplete_details?: ResponseObject['incomplete_details'];
  error?: ResponseObject['error'];
}

/** The response object in a given state; `output` is used as given (pass a fresh array: events are serialised later). */
export function responseObject(meta: ResponseMeta, status: ResponseStatus, end: Ending): ResponseObject {
  const r = meta.request;
  const done = status !== 'in_progress';
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    status,
    background: false,
    completed_at: status === 'completed' ? Math.floor((meta.now ?? Date.now)() / 1000) : null,
    error: end.error ?? null,
    incomplete_details: end.incomplete_details ?? null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    max_tool_calls: r.max_tool_calls ?? null,
    model: meta.model,
    output: end.output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    prompt_cache_key: r.prompt_cache_key ?? null,
    reasoning: { effort: r.reasoning?.effort ?? null, summary: r.reasoning?.summary ?? null },
    safety_identifier: r.safety_identifier ?? null,
    service_tier: r.service_tier ?? 'default',
    store: r.store ?? true,
    // The backend's own default applies when the request sets none, and the gateway does not know it.
    temperature: r.temperature ?? null,
    text: { format: r.text?.format ?? { type: 'text' }, verbosity: r.text?.verbosity ?? 'medium' },
    tool_choice: r.tool_choice ?? 'auto',
    tools: r.tools ?? [],
    top_logprobs: r.top_logprobs ?? 0,
    top_p: r.top_p ?? null,
    truncation: r.truncation ?? 'disabled',
    usage: done && end.usage ? responsesUsage(end.usage) : null,
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}
