// A Messages request as a chat-completions request for a backend that serves
// only chat (vLLM, SGLang, ...): the conversation, the top-level fields in
// chat's names (and vLLM's extras where they map), and the names of what a
// chat backend cannot use, which is dropped rather than refused.
//
//   const { messages, params, dropped } = toChat(parseMessagesRequest(body));
//
// `stream` is not among `params`: the caller asks the backend for a stream
// (with usage) when the client asked for one.
import { GatewayError } from '../../contract/errors';
import { chatMessages, type MessageOptions, type TranslatedMessage } from './to-chat-messages';
import { isCustomTool, type MessagesRequest } from './request';

export interface ToChatOptions extends MessageOptions {
  /** What to do with a tool the provider would run (web search, code execution): drop it (default) or refuse the request. */
  serverTools?: 'drop' | 'refuse';
  /**
   * The body fields that make this backend continue a final assistant message
   * (Messages' prefill), e.g. vLLM's `{continue_final_message: true, add_generation_prompt: false}`.
   * Without them a prefill is sent as a finished turn, and named in `dropped` as `assistant_prefill`.
   */
  assistantPrefix?: Readonly<Record<string, unknown>>;
}

export interface ChatTranslation {
  messages: TranslatedMessage[];
  params: Record<string, unknown>;
  dropped: string[];
}

/** Top-level fields translated below; any other is dropped by name. */
const TRANSLATED = new Set([
  'model', 'messages', 'system', 'stream', 'max_tokens', 'temperature', 'top_p', 'top_k', 'stop_sequences',
  'metadata', 'tools', 'tool_choice', 'thinking', 'output_config',
]);

export function toChat(req: MessagesRequest, options: ToChatOptions = {}): ChatTranslation {
  const dropped = new Set<string>();
  const messages = chatMessages(req, dropped, options);
  const params: Record<string, unknown> = { max_tokens: req.max_tokens };
  if (req.temperature !== undefined) params.temperature = req.temperature;
  if (req.top_p !== undefined) params.top_p = req.top_p;
  if (req.top_k !== undefined) params.top_k = req.top_k;
  if (req.stop_sequences !== undefined && req.stop_sequences.length > 0) params.stop = req.stop_sequences;
  if (typeof req.metadata?.user_id === 'string') params.user = req.metadata.user_id;
  for (const key in req.metadata) if (key !== 'user_id') dropped.add(`metadata.${key}`);
  toolParams(req, params, dropped, options);
  thinkingParams(req, params, dropped);
  if (req.messages.at(-1)?.role === 'assistant') {
    if (options.assistantPrefix) Object.assign(params, options.assistantPrefix);
    else dropped.add('assistant_prefill');
  }
  for (const key in req) if (!TRANSLATED.has(key)) dropped.add(key);
  return { messages, params, dropped: [...dropped] };
}

function toolParams(req: MessagesRequest, params: Record<string, unknown>, dropped: Set<string>, options: ToChatOptions): void {
  const functions: unknown[] = [];
  req.tools?.forEach((tool, i) => {
    if (!isCustomTool(tool)) {
      if (options.serverTools === 'refuse') {
        throw new GatewayError('invalid_request', `tools[${i}] (${tool.type}) is a tool the provider runs, which this model's backend cannot run. Remove it, or use a model that offers it.`, { param: `tools[${i}]` });
      }
      return void dropped.add(`tools.${tool.name}`);
    }
    const { name, description, input_schema, strict, type: _type, ...rest } = tool;
    for (const key in rest) dropped.add(key === 'cache_control' ? key : `tools.${key}`);
    const fn: Record<string, unknown> = { name, parameters: input_schema };
    if (description !== undefined) fn.description = description;
    if (typeof strict === 'boolean') fn.strict = strict;
    functions.push({ type: 'function', function: fn });
  });
  if (functions.length > 0) params.tools = functions;
  const choice = req.tool_choice;
  if (choice === undefined) return;
  // A choice among no tools (all of them the provider's) means nothing to a chat backend, which would refuse it.
  if (functions.length === 0) return void dropped.add('tool_choice');
  params.tool_choice = choice.type === 'auto' ? 'auto' : choice.type === 'any' ? 'required' : choice.type === 'none' ? 'none'
    : { type: 'function', function: { name: choice.name } };
  if ('disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use === true) params.parallel_tool_calls = false;
}

/**
 * Thinking on a chat backend is the chat template's switch (Qwen3, DeepSeek,
 * GLM read `enable_thinking`), and effort where the model takes one (gpt-oss
 * reads `reasoning_effort`): `output_config.effort`, or else the budget's size.
 */
function thinkingParams(req: MessagesRequest, params: Record<string, unknown>, dropped: Set<string>): void {
  const thinking = req.thinking;
  if (thinking?.type === 'enabled' || thinking?.type === 'adaptive') params.chat_template_kwargs = { enable_thinking: true };
  else if (thinking?.type === 'disabled') params.chat_template_kwargs = { enable_thinking: false };
  else if (thinking !== undefined) dropped.add('thinking');
  // How the client wants the thinking shown (display) a chat backend cannot do: its reasoning comes back as it is.
  if (params.chat_template_kwargs !== undefined) for (const key in thinking) if (key !== 'type' && key !== 'budget_tokens') dropped.add(`thinking.${key}`);
  const on = thinking?.type === 'enabled' || thinking?.type === 'adaptive';
  const { effort, format, ...rest } = req.output_config ?? {};
  const level = effort ? (Object.hasOwn(EFFORT, effort) ? EFFORT[effort] : undefined) : on ? budgetEffort(thinking?.budget_tokens) : undefined;
  if (level !== undefined) params.reasoning_effort = level;
  else if (effort) dropped.add('output_config.effort');
  if (format?.type === 'json_schema' && format.schema) {
    params.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  } else if (format) dropped.add('output_config.format');
  for (const key in rest) dropped.add(`output_config.${key}`);
}

const EFFORT: Record<string, string> = { low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' };

/** A budget under 4k tokens is a light think, under 16k a medium one. */
function budgetEffort(budget: number | undefined): string | undefined {
  if (budget === undefined) return undefined;
  return budget < 4096 ? 'low' : budget < 16384 ? 'medium' : 'high';
}
