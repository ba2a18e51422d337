// The OpenAI Chat Completions request fields the interface leaves "not
// shown". Clients send them at the top level; each is checked for type here
// and folded into model_params, which openai-format backends receive at the
// top level again. model_params may carry them too, checked the same way.
import { z } from 'zod';
import { capField } from './output-cap';

const num = z.number().nullable().optional();
const int = z.number().int().nullable().optional();
const bool = z.boolean().nullable().optional();
const str = z.string().nullable().optional();

const functionDef = z.looseObject({
  name: z.string().min(1).max(256),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  strict: bool,
});

const tool = z.looseObject({ type: z.literal('function'), function: functionDef });

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
  z.looseObject({ type: z.literal('allowed_tools'), allowed_tools: z.looseObject({ mode: z.enum(['auto', 'required']), tools: z.array(z.record(z.string(), z.unknown())) }) }),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string().min(1).max(64),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: bool,
    }),
  }),
]);

export const chatParamsShape = {
  temperature: num,
  top_p: num,
  n: num,
  // Non-negative integers: a backend coerces "100000" to a number (see output-cap.ts).
  max_tokens: capField,
  max_completion_tokens: capField,
  stop: z.union([z.string(), z.array(z.string()).max(16)]).nullable().optional(),
  seed: int,
  presence_penalty: num,
  frequency_penalty: num,
  user: str,
  stream_options: z.looseObject({ include_usage: bool }).nullable().optional(),
  response_format: responseFormat.nullable().optional(),
  tools: z.array(tool).max(512).nullable().optional(),
  tool_choice: toolChoice.nullable().optional(),
  parallel_tool_calls: bool,
  logprobs: bool,
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  logit_bias: z.record(z.string(), z.number()).nullable().optional(),
  reasoning_effort: str,
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  service_tier: str,
};

export const OPENAI_CHAT_NAMES = Object.keys(chatParamsShape) as (keyof typeof chatParamsShape)[];

/**
 * Strings in the parameters, all of which may reach the model as text: stop
 * sequences, tool names, descriptions and schemas, response schemas, and any
 * model-specific key (a guided-decoding regex, a chat template argument).
 */
export function paramTexts(params: Record<string, unknown>, out: string[]): void {
  for (const key in params) collectStrings(params[key], out, 0);
}

const MAX_DEPTH = 64;

/** Every string value (and object key) under `value`: descriptions, enum values and names all reach the model. */
function collectStrings(value: unknown, out: string[], depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out, depth + 1);
  else if (value !== null && typeof value === 'object') {
    for (const key in value) {
      out.push(key);
      collectStrings((value as Record<string, unknown>)[key], out, depth + 1);
    }
  }
}
