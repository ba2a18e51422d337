// How much one request of an input endpoint (embeddings, rerank, score,
// moderations) may carry: inputs (documents, pairs) and characters of text.
// A request past either is a 400 naming the field, before any plugin or
// backend sees it (docs/endpoints.md).
import { z } from 'zod';
import { intLike } from './values';

const limit = (maxInputs: number) => z.strictObject({
  /** Items of the request's list: embeddings' inputs, rerank's documents, score's pairs, moderations' inputs. */
  maxInputs: intLike(1, 1_000_000).default(maxInputs),
  /** Characters of text across the request's inputs (a token id given as a number counts as one). */
  maxChars: intLike(1, 1_000_000_000).default(1_000_000),
}).prefault({});

export const endpointLimitsSchema = z.strictObject({
  embeddings: limit(2048),
  rerank: limit(1000),
  score: limit(1000),
  moderations: limit(256),
}).prefault({});

export type EndpointLimits = z.infer<typeof endpointLimitsSchema>;
export type InputLimits = EndpointLimits['embeddings'];
