// POST /v{1,2}/images/generations body. Images come back as URLs (the
// interface's default) or, with response_format "b64_json", inline.
import { z } from 'zod';
import { applyFieldRules, foldTopLevel, MODEL_ID_MAX, parseBody } from '../request/validate';
import { paramTexts } from '../request/chat-params';
import type { FieldRules, ImageRequest } from '../contract/types';

export const OPENAI_IMAGE_NAMES = ['n', 'size', 'response_format', 'quality', 'style', 'user'] as const;

const size = z.string().regex(/^[1-9]\d{0,4}x[1-9]\d{0,4}$/, 'must look like <width>x<height>, e.g. 1024x1024');
const imageParamsShape = {
  n: z.number().nullable().optional(),
  size: size.nullable().optional(),
  response_format: z.enum(['url', 'b64_json']).nullable().optional(),
};

const imageSchema = z.strictObject({
  model: z.string().min(1).max(MODEL_ID_MAX),
  prompt: z.string().min(1),
  model_params: z.looseObject(imageParamsShape).nullable().optional(),
  ...imageParamsShape,
  quality: z.string().nullable().optional(),
  style: z.string().nullable().optional(),
  user: z.string().nullable().optional(),
});

export type { ImageRequest };

export function parseImageRequest(body: unknown, fields?: FieldRules): ImageRequest {
  const parsed = parseBody(imageSchema, body);
  const model_params = applyFieldRules(parsed, foldTopLevel(parsed, OPENAI_IMAGE_NAMES), fields);
  const texts = [parsed.prompt];
  paramTexts(model_params, texts);
  return { model: parsed.model, prompt: parsed.prompt, model_params, texts };
}
