// A Responses request as a chat-completions request, for a backend that
// serves only chat (vLLM, SGLang, ...). What a chat backend cannot use is
// dropped and named, never refused (except hosted tools on a route that says
// so). The caller adds model, stream and stream_options.
//
//   const { messages, params, dropped } = toChat(req, { hostedTools: 'drop', history });
import type { ChatMessage } from '../../contract/types';
import { OUTPUT_CAP_FIELDS, outputCapOf } from '../../request/output-cap';
import { itemsToMessages } from './messages';
import { chatToolChoice, chatTools, offeredTools, type HostedTools } from './tools';
import type { InputItem, ResponsesRequest } from './types';

export interface ToChatOptions {
  /** A tool the chat backend cannot run: dropped (the default) or refused. */
  hostedTools?: HostedTools;
  /** The stored items of the response named by previous_response_id (see historyItems), earliest first. */
  history?: readonly InputItem[];
}

export interface ChatTranslation {
  messages: ChatMessage[];
  /** Top-level chat fields: max_tokens, temperature, tools, response_format, ... */
  params: Record<string, unknown>;
  /** What the backend will not see, e.g. "include", "tools:web_search", "input:reasoning"; for a header, a log line and a counter. */
  dropped: string[];
}

/** Responses fields with no chat counterpart a chat backend reads: dropped when set. */
const UNUSABLE = ['include', 'truncation', 'prompt_cache_key', 'prompt_cache_retention', 'prompt_cache_options', 'safety_identifier', 'client_metadata',
  'background', 'conversation', 'prompt', 'context_management', 'moderation', 'stream_options', 'max_tool_calls', 'top_logprobs'];

/**
 * Fields read below, the ones above, the ones for the gateway itself (store, metadata, stream), and chat's own
 * structure, which the translation writes (messages; n, as one choice is read). Any other field passes to the
 * backend as sent: the extras chat servers take (top_k, repetition_penalty, chat_template_kwargs).
 */
const NOT_PASSED = new Set(['model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'text', 'reasoning', ...OUTPUT_CAP_FIELDS,
  'temperature', 'top_p', 'user', 'service_tier', 'metadata', 'store', 'stream', 'previous_response_id', 'messages', 'n', ...UNUSABLE]);

// Chat backends take low, medium and high; OpenAI's extremes map to the nearest.
const EFFORT: Record<string, string> = { minimal: 'low', xhigh: 'high' };

export function toChat(req: ResponsesRequest, options: ToChatOptions = {}): ChatTranslation {
  const dropped = new Set<string>();
  const messages: ChatMessage[] = [];
  if (req.instructions) messages.push({ role: 'system', content: req.instructions });
  if (options.history) itemsToMessages(options.history, messages, dropped);
  else if (req.previous_response_id) dropped.add('previous_response_id');
  if (typeof req.input === 'string') messages.push({ role: 'user', content: req.input });
  else if (req.input) itemsToMessages(req.input, messages, dropped);

  const params: Record<string, unknown> = {};
  for (const key in req) if (!NOT_PASSED.has(key)) params[key] = req[key];
  for (const name of UNUSABLE) if (isSet(req[name])) dropped.add(name);
  // max_tokens, not max_completion_tokens: every chat server reads it (vLLM, SGLang, llama.cpp, TGI), and vLLM counts
  // reasoning tokens in it, as Responses counts them in max_output_tokens. The one cap: the smallest the request names.
  copy(params, 'max_tokens', outputCapOf(req));
  copy(params, 'temperature', req.temperature);
  copy(params, 'top_p', req.top_p);
  copy(params, 'user', req.user);
  copy(params, 'service_tier', req.service_tier);
  const effort = req.reasoning?.effort;
  if (typeof effort === 'string') params.reasoning_effort = Object.hasOwn(EFFORT, effort) ? EFFORT[effort] : effort;
  const format = req.text?.format;
  if (format?.type === 'json_object') params.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema' && 'schema' in format) {
    const { name, schema, strict, description } = format;
    params.response_format = { type: 'json_schema', json_schema: { name, schema, ...(typeof strict === 'boolean' && { strict }), ...(typeof description === 'string' && { description }) } };
  }
  if (isSet(req.text?.verbosity)) dropped.add('text.verbosity');

  const translated = chatTools(offeredTools(req, options.history), options.hostedTools ?? 'drop', dropped);
  const { toolChoice, tools } = chatToolChoice(req.tool_choice, translated, dropped);
  // A chat server refuses tool_choice without tools: with none left, the request goes without both.
  if (tools.length > 0) {
    params.tools = tools;
    copy(params, 'tool_choice', toolChoice);
    copy(params, 'parallel_tool_calls', req.parallel_tool_calls);
  } else if (toolChoice === 'required' || typeof toolChoice === 'object') dropped.add('tool_choice');
  return { messages, params, dropped: [...dropped] };
}

function copy(params: Record<string, unknown>, name: string, value: unknown): void {
  if (value !== null && value !== undefined) params[name] = value;
}

/** A value that asks for something: not absent, false, zero, empty, or "disabled". */
function isSet(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === 'disabled') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}
