// POST /v{1,2}/chat/completions body: the interface's fields, the messages of
// the route's dialect, and the OpenAI request fields folded into model_params
// (on the openai dialect, with every other top-level field).
// Every piece of text the request forwards is gathered once here, so policy
// (content filter, size limits, usage estimates) reads one list.
import { z } from 'zod';
import { applyFieldRules, foldTopLevel, MODEL_ID_MAX, parseBody } from '../request/validate';
import { messagesSchema, messageTexts, type ChatMessage, type Dialect } from './chat-messages';
import { chatParamsShape, OPENAI_CHAT_NAMES, paramTexts } from '../request/chat-params';
import type { ChatRequest, FieldRules } from '../types';

export { OPENAI_CHAT_NAMES };
export type { ChatMessage, ChatRequest, Dialect };

const chatShape = (dialect: Dialect) => ({
  model: z.string().min(1).max(MODEL_ID_MAX),
  messages: messagesSchema[dialect],
  stream: z.boolean().nullable().optional(),
  model_params: z.looseObject(chatParamsShape).nullable().optional(),
  ...chatParamsShape,
});

// Built once: nothing is compiled per request. The interface's own dialect
// refuses a field it does not know; OpenAI's takes what the SDKs send (store,
// metadata, vLLM's top_k or guided_json through extra_body), type-checking the
// fields it knows and forwarding the rest.
type ChatBody = z.infer<z.ZodObject<ReturnType<typeof chatShape>>> & Record<string, unknown>;
const SCHEMAS: Record<Dialect, z.ZodType<ChatBody>> = {
  interface: z.strictObject(chatShape('interface')),
  openai: z.looseObject(chatShape('openai')),
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
  const model_params = applyFieldRules(parsed, foldTopLevel(parsed, foldedNames(parsed, dialect)), fields);
  const texts: string[] = [];
  messageTexts(parsed.messages, texts);
  paramTexts(model_params, texts);
  return { model: parsed.model, messages: parsed.messages, stream: parsed.stream === true, model_params, texts };
}
