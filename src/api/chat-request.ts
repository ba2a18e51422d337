// POST /v{1,2}/chat/completions body, exactly as the interface defines it,
// plus the OpenAI top-level sampling names folded into model_params.
import { z } from 'zod';
import { foldTopLevel, MODEL_ID_MAX, parseBody } from './validate';

const numberOrNull = z.number().nullable().optional();

export const OPENAI_CHAT_NAMES = ['temperature', 'top_p', 'max_tokens', 'stop', 'n', 'seed', 'presence_penalty', 'frequency_penalty', 'user'] as const;

const chatParamsShape = {
  temperature: numberOrNull,
  top_p: numberOrNull,
  n: numberOrNull,
  max_tokens: z.number().int().nullable().optional(),
  stop: z.union([z.string(), z.array(z.string())]).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  presence_penalty: numberOrNull,
  frequency_penalty: numberOrNull,
  user: z.string().nullable().optional(),
};

const chatSchema = z.strictObject({
  model: z.string().min(1).max(MODEL_ID_MAX),
  messages: z.array(z.strictObject({
    role: z.enum(['system', 'user', 'assistant']),
    content: z.string(),
  })).min(1),
  stream: z.boolean().nullable().optional(),
  model_params: z.looseObject({ temperature: numberOrNull, top_p: numberOrNull, n: numberOrNull }).nullable().optional(),
  ...chatParamsShape,
});

export interface ChatMessage { role: 'system' | 'user' | 'assistant'; content: string }

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  model_params: Record<string, unknown>;
}

export function parseChatRequest(body: unknown): ChatRequest {
  const parsed = parseBody(chatSchema, body);
  return {
    model: parsed.model,
    messages: parsed.messages,
    stream: parsed.stream === true,
    model_params: foldTopLevel(parsed, OPENAI_CHAT_NAMES),
  };
}
