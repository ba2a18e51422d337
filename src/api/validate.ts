// Request-body validation at the edge: one schema per endpoint, the first
// problem reported as invalid_request with the offending input's path.
import type { z } from 'zod';
import { GatewayError } from '../errors';
import { describeIssue, innermostIssue, issuePath } from '../config/issues';

/** Model ids are names, not payloads: longer ones are refused before they reach a log, a label or a cache. */
export const MODEL_ID_MAX = 256;

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  // reportInput: the message can then tell a missing field from one of the wrong type.
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return result.data;
  const issue = innermostIssue(result.error.issues[0]);
  const param = issuePath(issue) || null;
  const message = issue.code === 'unrecognized_keys' && issue.path.length === 0
    ? `${param} is not a known field of this request. Model-specific parameters go in model_params.`
    : `${describeIssue(issue)}.`;
  throw new GatewayError('invalid_request', message, { param });
}

/**
 * OpenAI clients send sampling parameters at the top level; the interface
 * keeps them in model_params. Moves each one over; a conflicting duplicate is
 * a 400 rather than a silent choice between the two.
 */
export function foldTopLevel(body: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  let params = (body.model_params ?? {}) as Record<string, unknown>;
  let copied = false;
  for (const name of names) {
    const value = body[name];
    if (value === undefined) continue;
    if (!copied) { params = { ...params }; copied = true; }
    if (name in params && !sameValue(params[name], value)) {
      throw new GatewayError('invalid_request', `${name} is given at the top level and in model_params with different values. Send it once.`, { param: name });
    }
    params[name] = value;
  }
  return params;
}

const sameValue = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);
