// limits: the interface's size limits, tightened if the operator wants. By
// default an image prompt is at most 1000 characters and model_params.n is an
// integer from 1 to 10 (images and chat). The interface's values are the
// ceiling: a config may lower them, not raise them. Optional chat limits
// cap the number of messages and their total characters.
//
//   - { name: limits, promptMaxChars: 1000, nMin: 1, nMax: 10, messagesMax: 200, messageCharsMax: 200000 }
import { z } from 'zod';
import { GatewayError, type PluginDefinition } from '../../src';

export const SPEC_PROMPT_MAX_CHARS = 1000;
export const SPEC_N_MIN = 1;
export const SPEC_N_MAX = 10;

const settingsSchema = z.strictObject({
  promptMaxChars: z.number().int().min(1).max(SPEC_PROMPT_MAX_CHARS).default(SPEC_PROMPT_MAX_CHARS),
  nMin: z.number().int().min(SPEC_N_MIN).max(SPEC_N_MAX).default(SPEC_N_MIN),
  nMax: z.number().int().min(SPEC_N_MIN).max(SPEC_N_MAX).default(SPEC_N_MAX),
  messagesMax: z.number().int().min(1).optional(),
  messageCharsMax: z.number().int().min(1).optional(),
}).refine((s) => s.nMin <= s.nMax, { path: ['nMin'], message: 'must not be greater than nMax' });

export type LimitsSettings = z.infer<typeof settingsSchema>;

const invalid = (param: string, message: string) => new GatewayError('invalid_request', message, { param });

export function checkN(n: unknown, s: LimitsSettings): void {
  if (n === undefined || n === null) return; // null means 1
  if (typeof n !== 'number' || !Number.isInteger(n) || n < s.nMin || n > s.nMax) {
    throw invalid('model_params.n', `model_params.n must be an integer from ${s.nMin} to ${s.nMax}.`);
  }
}

/** Characters as a person counts them (code points: an emoji is one), not UTF-16 units. */
export function countChars(text: string, max: number): number {
  if (text.length <= max) return text.length; // a code point is never shorter than one unit
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export const plugin: PluginDefinition<LimitsSettings> = {
  name: 'limits',
  // The interface's own limits: checked before any budget is spent, and on even when the config leaves it out.
  stage: 'validate',
  required: true,
  schema: settingsSchema,
  create(s) {
    return {
      onRequest(ctx) {
        if (ctx.image) {
          const chars = countChars(ctx.image.prompt, s.promptMaxChars);
          if (chars > s.promptMaxChars) {
            throw invalid('prompt', `prompt is ${chars} characters long; the limit is ${s.promptMaxChars}.`);
          }
          checkN(ctx.image.model_params.n, s);
        }
        if (ctx.chat) {
          checkN(ctx.chat.model_params.n, s);
          const { messages } = ctx.chat;
          if (s.messagesMax !== undefined && messages.length > s.messagesMax) {
            throw invalid('messages', `messages has ${messages.length} items; the limit is ${s.messagesMax}.`);
          }
          if (s.messageCharsMax !== undefined) {
            let chars = 0;
            for (const text of ctx.chat.texts) chars += text.length;
            if (chars > s.messageCharsMax) throw invalid('messages', `the request's text (messages, tool calls and definitions) holds ${chars} characters in all; the limit is ${s.messageCharsMax}.`);
          }
        }
      },
    };
  },
};
