// POST /v{1,2}/chat/completions body: the interface's fields, the messages of
// the route's dialect, and the OpenAI request fields folded into model_params.
// Every piece of text the request forwards is gathered once here, so policy
// (content filter, size limits, usage estimates) reads one list.
import { z } from 'zod';
import { foldTopLevel, MODEL_ID_MAX, parseBody } from './validate';
import { messagesSchema, messageTexts, type ChatMessage, type Dialect } from './chat-messages';
import { chatParamsShape, OPENAI_CHAT_NAMES, paramTexts } from './chat-params';
import type { ChatRequest } from '../types';

export { OPENAI_CHAT_NAMES };
export type { ChatMessage, Dialect };

const chatSchema = (dialect: Dialect) => z.strictObject({
  model: z.string().min(1).max(MODEL_ID_MAX),
  messages: messagesSchema[dialect],
  stream: z.boolean().nullable().optional(),
  model_params: z.looseObject(chatParamsShape).nullable().optional(),
  ...chatParamsShape,
});

// Built once: nothing is compiled per request.
const SCHEMAS: Record<Dialect, z.ZodType<z.infer<ReturnType<typeof chatSchema>>>> = {
  interface: chatSchema('interface'),
  openai: chatSchema('openai'),
};

export type { ChatRequest };

export function parseChatRequest(body: unknown, dialect: Dialect = 'interface'): ChatRequest {
  const parsed = parseBody(SCHEMAS[dialect], body);
  const model_params = foldTopLevel(parsed, OPENAI_CHAT_NAMES);
  const texts: string[] = [];
  messageTexts(parsed.messages, texts);
  paramTexts(model_params, texts);
  return { model: parsed.model, messages: parsed.messages, stream: parsed.stream === true, model_params, texts };
}
