// POST /v1/responses body (OpenAI's Responses API). The fields the gateway
// reads are type-checked, so a bad one is refused with its path
// (input[2].content[0].text); every other field, at any level, is kept as
// sent, so a backend that serves the Responses API natively gets the body its
// client wrote, and item or tool kinds newer than this file pass.
import { z } from 'zod';
import { GatewayError } from '../../contract/errors';
import { MODEL_ID_MAX, parseBody } from '../../request/validate';
import { capField, unifyOutputCaps } from '../../request/output-cap';
import type { ResponsesRequest } from './types';

export type { ResponsesRequest };

const str = z.string();
const optStr = z.string().nullable().optional();
const bool = z.boolean().nullable().optional();
const num = z.number().nullable().optional();
const int = z.number().int().nullable().optional();
const record = z.record(z.string(), z.unknown());

/**
 * Each list below is a discriminated union of the kinds checked here, then a
 * catch-all for any other `type`. The catch-all refuses the known types, so a
 * malformed known kind is reported by its own branch (`call_id is required`).
 */
const otherThan = (known: readonly string[]) => {
  const set = new Set(known);
  // abort: a union returns a branch that failed only on a refinement as if it were the one that matched.
  return z.looseObject({ type: z.string().refine((t) => !set.has(t), { abort: true }) });
};

const part = z.union([
  z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('input_text'), text: str }),
    z.looseObject({ type: z.literal('output_text'), text: str }),
    z.looseObject({ type: z.literal('refusal'), refusal: str }),
    z.looseObject({ type: z.literal('input_image'), image_url: optStr, file_id: optStr, detail: optStr }),
  ]),
  otherThan(['input_text', 'output_text', 'refusal', 'input_image']),
]);
const content = z.union([str, z.array(part)]);

const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1).max(256),
  description: optStr,
  parameters: record.nullable().optional(),
  strict: bool,
});
const customFormat = z.union([
  z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('text') }),
    z.looseObject({ type: z.literal('grammar'), syntax: optStr, definition: str }),
  ]),
  otherThan(['text', 'grammar']),
]);
const customTool = z.looseObject({ type: z.literal('custom'), name: z.string().min(1).max(256), description: optStr, format: customFormat.nullable().optional() });
const nestedTool = z.union([z.discriminatedUnion('type', [functionTool, customTool]), otherThan(['function', 'custom'])]);
const tool = z.union([
  z.discriminatedUnion('type', [
    functionTool,
    customTool,
    z.looseObject({ type: z.literal('namespace'), name: z.string().min(1), description: optStr, tools: z.array(nestedTool) }),
  ]),
  otherThan(['function', 'custom', 'namespace']),
]);
const tools = z.array(tool).max(512);

const knownItem = z.discriminatedUnion('type', [
  // A message may leave out `type` (OpenAI's "easy input message").
  z.looseObject({ type: z.literal('message').optional(), role: z.enum(['user', 'assistant', 'system', 'developer']), content }),
  z.looseObject({ type: z.literal('function_call'), call_id: str, name: str, arguments: str, namespace: optStr }),
  z.looseObject({ type: z.literal('function_call_output'), call_id: str, output: content }),
  z.looseObject({ type: z.literal('custom_tool_call'), call_id: str, name: str, input: str, namespace: optStr }),
  z.looseObject({ type: z.literal('custom_tool_call_output'), call_id: str, output: content }),
  z.looseObject({
    type: z.literal('reasoning'),
    summary: z.array(z.looseObject({ text: str })).optional(),
    content: z.array(z.looseObject({ text: str })).nullable().optional(),
    encrypted_content: optStr,
  }),
  z.looseObject({ type: z.literal('local_shell_call'), id: optStr, call_id: optStr, action: record }),
  z.looseObject({ type: z.literal('local_shell_call_output'), id: str, output: str }),
  z.looseObject({ type: z.literal('item_reference'), id: str }),
  z.looseObject({ type: z.literal('additional_tools'), tools }),
]);
const ITEM_TYPES = ['message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output', 'reasoning', 'local_shell_call', 'local_shell_call_output', 'item_reference', 'additional_tools'];
// An item reference may also leave out `type`: then it is only an id.
const bareReference = z.strictObject({ id: str, type: z.null().optional() });
const item = z.union([knownItem, otherThan(ITEM_TYPES), bareReference]);

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('function'), name: z.string().min(1) }),
    z.looseObject({ type: z.literal('custom'), name: z.string().min(1) }),
    z.looseObject({ type: z.literal('allowed_tools'), mode: z.enum(['auto', 'required']), tools: z.array(z.looseObject({ type: str, name: optStr, namespace: optStr })) }),
  ]),
  otherThan(['function', 'custom', 'allowed_tools']),
]);

const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({ type: z.literal('json_schema'), name: z.string().min(1).max(64), schema: record, strict: bool, description: optStr }),
]);

const requestSchema = z.looseObject({
  model: z.string().min(1).max(MODEL_ID_MAX),
  input: z.union([str, z.array(item)]).optional(),
  instructions: optStr,
  tools: tools.nullable().optional(),
  tool_choice: toolChoice.nullable().optional(),
  parallel_tool_calls: bool,
  text: z.looseObject({ format: textFormat.nullable().optional(), verbosity: optStr }).nullable().optional(),
  reasoning: z.looseObject({ effort: optStr, summary: optStr }).nullable().optional(),
  max_output_tokens: z.number().int().min(1).nullable().optional(),
  // Not Responses fields, but a chat backend (or a lenient server) reads them: checked, and held to the one cap.
  max_tokens: capField,
  max_completion_tokens: capField,
  max_tool_calls: int,
  temperature: num,
  top_p: num,
  top_logprobs: int,
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  store: bool,
  stream: bool,
  previous_response_id: optStr,
  include: z.array(str).nullable().optional(),
  truncation: z.enum(['auto', 'disabled']).nullable().optional(),
  user: optStr,
  safety_identifier: optStr,
  prompt_cache_key: optStr,
  client_metadata: record.nullable().optional(),
  service_tier: optStr,
  background: bool,
});

export function parseResponsesRequest(body: unknown): ResponsesRequest {
  const request = parseBody(requestSchema, body) as ResponsesRequest;
  // OpenAI takes a request without input only when it continues an earlier response.
  if (request.input === undefined && !request.previous_response_id) {
    throw new GatewayError('invalid_request', 'input is required: send a string or a list of input items.', { param: 'input' });
  }
  // One output cap wins (the smallest), in every cap field the request carries and in max_output_tokens.
  return unifyOutputCaps(request, 'max_output_tokens');
}
