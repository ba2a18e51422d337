// The bodies of the audio endpoints (docs/endpoints.md#audio), validated once
// here and made into the request view the policy reads (ctx.audio):
// transcriptions and translations are a multipart upload (a file, a model,
// text fields), speech is JSON (a text to speak). Unknown fields are refused,
// as for the input endpoints: text in them would pass unfiltered.
import { z } from 'zod';
import type { EndpointLimits } from '../config/endpoint-limits-schema';
import type { AudioRequest } from '../contract/types';
import { GatewayError } from '../contract/errors';
import { parseMultipart, type Part } from '../request/multipart';
import { MODEL_ID_MAX, parseBody } from '../request/validate';
import { wavSeconds } from '../request/wav';

const model = z.string().min(1).max(MODEL_ID_MAX);
/** A form field is text: a number is written as one, and anything else is a 400 naming it. */
const formNumber = (min: number, max: number) => z.string().regex(/^-?\d+(\.\d+)?$/, 'must be a number').transform(Number).pipe(z.number().min(min).max(max));
const formBoolean = z.enum(['true', 'false']).transform((v) => v === 'true');

const uploadShape = {
  model,
  prompt: z.string().optional(),
  response_format: z.enum(['json', 'text', 'srt', 'verbose_json', 'vtt']).optional(),
  temperature: formNumber(0, 1).optional(),
  stream: formBoolean.optional(),
  'timestamp_granularities[]': z.array(z.enum(['word', 'segment'])).optional(),
};
const transcriptionSchema = z.strictObject({ ...uploadShape, language: z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'must be a language code such as en or pt-BR').optional() });
const translationSchema = z.strictObject(uploadShape);

const speechSchema = z.strictObject({
  model,
  input: z.string().min(1),
  voice: z.union([z.string().min(1).max(256), z.strictObject({ id: z.string().min(1).max(256) })]),
  response_format: z.enum(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']).optional(),
  speed: z.number().min(0.25).max(4).optional(),
  instructions: z.string().optional(),
  /** Only the audio bytes themselves are relayed; OpenAI's `sse` (base64 audio in events) is refused. */
  stream_format: z.literal('audio').optional(),
});

const UNKNOWN_FIELD = 'The gateway forwards only the fields docs/endpoints.md lists for this endpoint.';
/** The upload's fields that may come more than once. */
const LISTS = new Set(['timestamp_granularities[]']);
/** A compressed file holds at most this many seconds per byte: 8 kbit/s, below any speech codec's usual rate. */
const MIN_BYTES_PER_SECOND = 1_000;

/** An upload, parsed: its request view, the file and the form's parts as they came. */
export interface Upload {
  view: AudioRequest;
  parts: Part[];
  file: Part;
  stream: boolean;
  /** The text fields' values as the client sent them (to tell whether the body must be written again). */
  sent: Readonly<Record<string, string>>;
  /** What the answer is: JSON (json, verbose_json) or text (text, srt, vtt). */
  responseFormat: 'json' | 'text' | 'srt' | 'verbose_json' | 'vtt';
}

function formFields(parts: readonly Part[]): { fields: Record<string, unknown>; file: Part } {
  const fields: Record<string, unknown> = {};
  let file: Part | undefined;
  for (const p of parts) {
    if (p.name === 'file') {
      if (file !== undefined) throw new GatewayError('invalid_request', 'file is sent twice: send one file.', { param: 'file' });
      if (p.filename === undefined) throw new GatewayError('invalid_request', 'file must be a file part (with a filename), not a text field.', { param: 'file' });
      file = p;
      continue;
    }
    const value = p.data.toString('utf8');
    if (LISTS.has(p.name)) ((fields[p.name] ??= []) as string[]).push(value);
    else if (p.name in fields) throw new GatewayError('invalid_request', `${p.name} is sent twice: send it once.`, { param: p.name });
    else fields[p.name] = value;
  }
  if (file === undefined || file.data.length === 0) throw new GatewayError('invalid_request', 'file is missing: send the audio as the form\'s file part.', { param: 'file' });
  return { fields, file };
}

/** A transcription's or a translation's multipart body (already bounded in size), as the view the policy reads. */
export function parseUpload(endpoint: 'transcriptions' | 'translations', body: Buffer, boundary: string, limits: EndpointLimits): Upload {
  const parts = parseMultipart(body, boundary);
  const { fields, file } = formFields(parts);
  const parsed = parseBody(endpoint === 'transcriptions' ? transcriptionSchema : translationSchema, fields, UNKNOWN_FIELD);
  const texts: Record<string, string> = {};
  if (parsed.prompt !== undefined) texts.prompt = parsed.prompt;
  const maxChars = limits[endpoint].maxChars;
  if ((parsed.prompt?.length ?? 0) > maxChars) throw new GatewayError('invalid_request', `prompt is longer than ${maxChars} characters. Send a shorter prompt.`, { param: 'prompt' });
  const seconds = wavSeconds(file.data);
  const view: AudioRequest = {
    model: parsed.model, fields: texts, texts: Object.values(texts), characters: 0,
    // Up to the next millisecond: a usage kept to the millisecond never exceeds the bound.
    seconds, boundSeconds: Math.ceil((seconds ?? file.data.length / MIN_BYTES_PER_SECOND) * 1000) / 1000,
  };
  return { view, parts, file, stream: parsed.stream ?? false, sent: texts, responseFormat: parsed.response_format ?? 'json' };
}

/** Speech's JSON body as its view: input and instructions are its texts. */
export function parseSpeech(body: unknown, limits: EndpointLimits): AudioRequest {
  const parsed = parseBody(speechSchema, body, UNKNOWN_FIELD);
  const max = limits.speech.maxChars;
  if (parsed.input.length > max) throw new GatewayError('invalid_request', `input has ${parsed.input.length} characters; at most ${max} are spoken in one request. Send it in several.`, { param: 'input' });
  const fields: Record<string, string> = { input: parsed.input };
  if (parsed.instructions !== undefined) fields.instructions = parsed.instructions;
  return { model: parsed.model, fields, texts: Object.values(fields), body: parsed, boundSeconds: 0, characters: parsed.input.length };
}
