// POST /v{1,2}/chat/completions body: the interface's fields, the messages of
// the route's dialect, and the OpenAI request fields folded into model_params
// (on the openai dialect, with every other top-level field).
// Every piece of text the request forwards is gathered once here, so policy
// (content filter, size limits, usage estimates) reads one list.
import { z } from 'zod';
import { applyFieldRules, foldTopLevel, MODEL_ID_MAX, parseBody } from '../request/validate';
import { messagesSchema, messageTexts, type ChatMessage, type Dialect } from './chat-messages';
import { chatParamsShape, OPENAI_CHAT_NAMES, paramTexts } from '../request/chat-params';
import { capField, unifyOutputCaps } from '../request/output-cap';
import type { ChatRequest, FieldRules } from '../contract/types';

export { OPENAI_CHAT_NAMES };
export type { ChatMessage, ChatRequest, Dialect };

// max_output_tokens is no chat field, but a backend may read it wherever it
// can arrive (model_params; the top level on the openai dialect): checked there.
const paramsShape = { ...chatParamsShape, max_output_tokens: capField };

const chatShape = (dialect: Dialect) => ({
  model: z.string().min(1).max(MODEL_ID_MAX),
  messages: messagesSchema[dialect],
  stream: z.boolean().nullable().optional(),
  model_params: z.looseObject(paramsShape).nullable().optional(),
  ...chatParamsShape,
});

// Built once: nothing is compiled per request. The interface's own dialect
// refuses a field it does not know; OpenAI's takes what the SDKs send (store,
// metadata, vLLM's top_k or guided_json through extra_body), type-checking the
// fields it knows and forwarding the rest.
type ChatBody = z.infer<z.ZodObject<ReturnType<typeof chatShape>>> & Record<string, unknown>;
const SCHEMAS: Record<Dialect, z.ZodType<ChatBody>> = {
  interface: z.strictObject(chatShape('interface')),
  openai: z.looseObject({ ...chatShape('openai'), max_output_tokens: capField }),
};

const SHAPED = new Set(Object.keys(chatShape('interface')));

/** The body's fields to fold into model_params: the OpenAI names, and on the openai dialect every field the schema does not shape. */
function foldedNames(body: Record<string, unknown>, dialect: Dialect): readonly string[] {
  if (dialect === 'interface') return OPENAI_CHAT_NAMES;
  let names: string[] | undefined;
  for (const key in body) if (!SHAPED.has(key)) (names ??= [...OPENAI_CHAT_NAMES]).push(key);
  return names ?? OPENAI_CHAT_NAMES;
}

export function parseChatRequest(body: unknown, dialect: Dialect = 'interface', fields?: FieldRules): ChatRequest {
  const parsed = parseBody(SCHEMAS[dialect], body);
  const params = applyFieldRules(parsed, foldTopLevel(parsed, foldedNames(parsed, dialect)), fields);
  // One output cap wins (the smallest), in every cap field the backend may read; in max_tokens when the request
  // names it only in max_output_tokens, which no chat server reads (and max_tokens is not added beside
  // max_completion_tokens: OpenAI's reasoning models refuse it).
  const named = typeof params.max_tokens === 'number' || typeof params.max_completion_tokens === 'number';
  const model_params = unifyOutputCaps(params, named ? undefined : 'max_tokens');
  const texts: string[] = [];
  messageTexts(parsed.messages, texts);
  paramTexts(model_params, texts);
  return { model: parsed.model, messages: parsed.messages, stream: parsed.stream === true, model_params, texts };
}
