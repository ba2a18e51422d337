// How much one request of an input endpoint (embeddings, rerank, score,
// moderations) may carry: inputs (documents, pairs) and characters of text;
// of an audio endpoint, bytes of the upload and characters of text. A request
// past a limit is a 400 naming the field (413 for the upload's bytes), before
// any plugin or backend sees it (docs/endpoints.md).
import { z } from 'zod';
import { intLike, sizeLike } from './values';

const limit = (maxInputs: number) => z.strictObject({
  /** Items of the request's list: embeddings' inputs, rerank's documents, score's pairs, moderations' inputs. */
  maxInputs: intLike(1, 1_000_000).default(maxInputs),
  /** Characters of text across the request's inputs (a token id given as a number counts as one). */
  maxChars: intLike(1, 1_000_000_000).default(1_000_000),
}).prefault({});

/** An audio upload (transcriptions, translations): bytes of the file, and characters of its prompt. */
const upload = z.strictObject({
  /** Bytes of the whole multipart body (the file, its fields and their framing); 25 MB by default, as OpenAI's. */
  maxBytes: sizeLike.default(25 * 1024 * 1024),
  maxChars: intLike(1, 1_000_000).default(4096),
}).prefault({});

export const endpointLimitsSchema = z.strictObject({
  embeddings: limit(2048),
  rerank: limit(1000),
  score: limit(1000),
  moderations: limit(256),
  transcriptions: upload,
  translations: upload,
  /** Characters of speech's input (OpenAI's limit: 4096). */
  speech: z.strictObject({ maxChars: intLike(1, 1_000_000).default(4096) }).prefault({}),
}).prefault({});

export type EndpointLimits = z.infer<typeof endpointLimitsSchema>;
export type InputLimits = EndpointLimits['embeddings'];
export type UploadLimits = EndpointLimits['transcriptions'];
