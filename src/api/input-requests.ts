// The bodies of the input endpoints, OpenAI's and vLLM's shapes
// (docs/endpoints.md): POST /v{1,2}/embeddings, /rerank, /score and
// /moderations. Each is validated once here, checked against its limits
// (endpointLimits) and made into the request view the policy reads.
// Unknown fields are refused: a backend may read text from a field the
// gateway does not know (vLLM's embeddings take `messages`), which the
// content filter would never see.
import { z } from 'zod';
import type { EndpointLimits } from '../config/endpoint-limits-schema';
import type { InputEndpoint } from '../config/schema';
import type { InputsRequest } from '../contract/types';
import { GatewayError } from '../contract/errors';
import { inputsView } from '../request/inputs';
import { MODEL_ID_MAX, parseBody } from '../request/validate';

const model = z.string().min(1).max(MODEL_ID_MAX);
const text = z.string();
const tokenIds = z.array(z.number().int().min(0).max(2 ** 31 - 1)).min(1);
const texts = z.array(text).min(1);
const count = z.number().int().min(0);
/** vLLM's: a prompt longer than this many tokens is cut from the left. */
const truncate_prompt_tokens = z.number().int().min(-1).nullable().optional();

const embeddingsSchema = z.strictObject({
  model,
  input: z.union([text, texts, tokenIds, z.array(tokenIds).min(1)]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().min(1).optional(),
  user: z.string().optional(),
  truncate_prompt_tokens,
});

const document = z.union([text, z.strictObject({ text })]);
const rerankSchema = z.strictObject({
  model,
  query: text,
  documents: z.array(document).min(1),
  top_n: count.optional(),
  return_documents: z.boolean().optional(),
  /** Cohere's v2 name for a document's token cap. */
  max_tokens_per_doc: count.optional(),
  user: z.string().optional(),
  truncate_prompt_tokens,
});

const scoreSchema = z.strictObject({
  model,
  text_1: z.union([text, texts]),
  text_2: z.union([text, texts]),
  user: z.string().optional(),
  truncate_prompt_tokens,
});

const moderationsSchema = z.strictObject({
  model,
  input: z.union([text, texts]),
});

interface InputShape {
  schema: z.ZodType<Record<string, unknown> & { model: string }>;
  /** The fields that hold texts, and those whose items are inputs counted against maxInputs. */
  fields: readonly string[];
  lists: readonly string[];
}

const SHAPES: Record<InputEndpoint, InputShape> = {
  embeddings: { schema: embeddingsSchema, fields: ['input'], lists: ['input'] },
  rerank: { schema: rerankSchema, fields: ['query', 'documents'], lists: ['documents'] },
  score: { schema: scoreSchema, fields: ['text_1', 'text_2'], lists: ['text_1', 'text_2'] },
  moderations: { schema: moderationsSchema, fields: ['input'], lists: ['input'] },
};

const UNKNOWN_FIELD = 'The gateway forwards only the fields docs/endpoints.md lists for this endpoint.';

export function parseInputsRequest(endpoint: InputEndpoint, body: unknown, limits: EndpointLimits): InputsRequest {
  const shape = SHAPES[endpoint];
  const parsed = parseBody(shape.schema, body, UNKNOWN_FIELD);
  if (endpoint === 'score') sameLengths(parsed);
  return inputsView(parsed.model, parsed, shape.fields, shape.lists, limits[endpoint]);
}

/** vLLM scores text_1 against each of text_2, or pairs two lists item by item: lists of two lengths pair nothing. */
function sameLengths(body: Record<string, unknown>): void {
  const { text_1: a, text_2: b } = body;
  if (Array.isArray(a) && Array.isArray(b) && a.length !== b.length && a.length !== 1) {
    throw new GatewayError('invalid_request', `text_1 has ${a.length} items and text_2 ${b.length}: send one text_1, or as many as text_2.`, { param: 'text_1' });
  }
}
