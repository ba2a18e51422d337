// POST /v1/messages (and /v1/messages/count_tokens) body: Anthropic's Messages
// request. Known fields are type-checked; anything else is kept as sent, so a
// native backend receives it and a new client field is never refused. Block
// and tool types the gateway does not know pass too (a translated backend
// drops them), since clients add new ones faster than gateways learn them.
import { z } from 'zod';
import { MODEL_ID_MAX, parseBody } from '../../request/validate';
import { capField, unifyOutputCaps } from '../../request/output-cap';

const cacheControl = z.looseObject({ type: z.string() }).nullable().optional();

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });

const imageSource = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string().min(1) }),
  z.looseObject({ type: z.literal('url'), url: z.string().min(1) }),
  z.looseObject({ type: z.literal('file'), file_id: z.string().min(1) }),
]);
const imageBlock = z.looseObject({ type: z.literal('image'), source: imageSource, cache_control: cacheControl });

/** Any block of a type not declared here: kept, and dropped when translated. */
const otherBlock = (known: readonly string[]) => z.looseObject({
  type: z.string().min(1).refine((t) => !known.includes(t), { message: 'is not valid here', abort: true }),
});

const resultPart = z.union([z.discriminatedUnion('type', [textBlock, imageBlock]), otherBlock(['text', 'image'])]);

const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});
const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(resultPart)]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
const thinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() });
const redactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });

const knownBlock = z.discriminatedUnion('type', [textBlock, imageBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock]);
const block = z.union([knownBlock, otherBlock(['text', 'image', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'])]);

const message = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('user'), content: z.union([z.string(), z.array(block)]) }),
  z.looseObject({ role: z.literal('assistant'), content: z.union([z.string(), z.array(block)]) }),
  // Clients put system instructions between turns (the SDK's SystemMessageParam).
  z.looseObject({ role: z.literal('system'), content: z.union([z.string(), z.array(textBlock)]) }),
]);

const customTool = z.looseObject({
  type: z.literal('custom').nullable().optional(),
  name: z.string().min(1).max(256),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});
/** A tool run by the provider (web search, code execution, ...): a versioned type other than `custom`. */
const serverTool = z.looseObject({
  type: z.string().min(1).refine((t) => t !== 'custom', { message: 'is not valid here', abort: true }),
  name: z.string().min(1).max(256),
});

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
const toolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), ...parallel }),
  z.looseObject({ type: z.literal('any'), ...parallel }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1), ...parallel }),
  z.looseObject({ type: z.literal('none') }),
]);

const requestShape = {
  model: z.string().min(1).max(MODEL_ID_MAX),
  messages: z.array(message).min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  max_tokens: z.number().int().min(1),
  // Not Messages fields, but a lenient server reads them: checked, and held to the one cap.
  max_completion_tokens: capField,
  max_output_tokens: capField,
  tools: z.array(z.union([customTool, serverTool])).max(1024).optional(),
  tool_choice: toolChoice.optional(),
  temperature: z.number().min(0).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
  // New thinking types arrive with new models: the type is any string, and only the known ones are translated.
  thinking: z.looseObject({ type: z.string().min(1), budget_tokens: z.number().int().min(0).optional() }).optional(),
  output_config: z.looseObject({
    effort: z.string().nullable().optional(),
    format: z.looseObject({ type: z.string(), schema: z.record(z.string(), z.unknown()).optional() }).nullable().optional(),
  }).optional(),
};

// Built once: nothing is compiled per request.
const messagesSchema = z.looseObject(requestShape);
const countTokensSchema = z.looseObject({ ...requestShape, max_tokens: requestShape.max_tokens.optional() });

export type MessagesRequest = z.infer<typeof messagesSchema>;
export type CountTokensRequest = z.infer<typeof countTokensSchema>;
export type MessageParam = MessagesRequest['messages'][number];
export type ContentBlockParam = Exclude<MessageParam['content'], string>[number];
/** A block of a declared type: switch on `type` over this, with a default for the rest. */
export type KnownBlock = z.infer<typeof knownBlock>;
export type ResultPart = z.infer<typeof textBlock> | z.infer<typeof imageBlock>;
export type ToolParam = NonNullable<MessagesRequest['tools']>[number];

/** The body of POST /v1/messages, or GatewayError('invalid_request') naming the input at fault. */
export function parseMessagesRequest(body: unknown): MessagesRequest {
  // One output cap wins (the smallest), in max_tokens and every other cap field the request carries.
  return unifyOutputCaps(parseBody(messagesSchema, body));
}

/** The body of POST /v1/messages/count_tokens: a Messages request without `max_tokens`. */
export function parseCountTokensRequest(body: unknown): CountTokensRequest {
  return parseBody(countTokensSchema, body);
}

/** A tool the client runs itself (the only kind a chat backend can call). */
export const isCustomTool = (tool: ToolParam): tool is z.infer<typeof customTool> =>
  tool.type === undefined || tool.type === null || tool.type === 'custom';
