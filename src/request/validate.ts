// Request-body validation at the edge: one schema per endpoint, the first
// problem reported as invalid_request with the offending input's path; the
// request's parameters folded into model_params, under the route's field rules.
import type { z } from 'zod';
import { GatewayError } from '../contract/errors';
import { describeIssue, formatPath, innermostIssue, issuePath, NOT_FINITE } from '../config/issues';
import { MAX_JSON_DEPTH } from './json-depth';
import type { FieldRules } from '../contract/types';

/** Model ids are names, not payloads: longer ones are refused before they reach a log, a label or a cache. */
export const MODEL_ID_MAX = 256;

/** `unknownHint`: what to do with a field the schema does not know (chat's: put it in model_params). */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown, unknownHint = 'Model-specific parameters go in model_params.'): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  // Only a refused body is parsed again, with reportInput, so the message can tell a missing field from
  // one of the wrong type: the option is for the message alone, and zod copies a parse's options into a
  // context of its own on every parse that is given them.
  const issue = innermostIssue(schema.safeParse(body, { reportInput: true }).error!.issues[0]);
  const param = issuePath(issue) || null;
  const message = issue.code === 'unrecognized_keys' && issue.path.length === 0
    ? `${param} is not a known field of this request. ${unknownHint}`
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
  refuseNonFinite(params, 'model_params');
  let copied = false;
  for (const name of names) {
    const value = body[name];
    if (value === undefined) continue;
    refuseNonFinite(value, name);
    if (!copied) { params = { ...params }; copied = true; }
    if (name in params && !sameValue(params[name], value)) {
      throw new GatewayError('invalid_request', `${name} is given at the top level and in model_params with different values. Send it once.`, { param: name });
    }
    params[name] = value;
  }
  return params;
}

/**
 * A route's rules for named fields, on the folded parameters: a refused one
 * (with a value; null means the model's default and is never sent) is a 400
 * naming where it was given; a dropped one is left out.
 */
export function applyFieldRules(body: Record<string, unknown>, params: Record<string, unknown>, rules: FieldRules | undefined): Record<string, unknown> {
  if (rules === undefined) return params;
  for (const name of rules.refuse) {
    if (params[name] === null || params[name] === undefined) continue;
    const param = body[name] !== undefined ? name : `model_params.${name}`;
    throw new GatewayError('invalid_request', `${param} is not accepted for this model. Send the request without it.`, { param });
  }
  if (!rules.drop.some((name) => name in params)) return params;
  const kept = { ...params };
  for (const name of rules.drop) delete kept[name];
  return kept;
}

const sameValue = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * Model-specific keys pass the schema untouched, and a number too large for a
 * double (1e400) parses as Infinity, which JSON.stringify would send upstream
 * as null. The walk allocates nothing unless it finds one.
 */
function refuseNonFinite(value: unknown, name: string): void {
  const path = nonFinitePath(value, 0);
  if (path === undefined) return;
  const param = formatPath([name, ...path.reverse()]);
  throw new GatewayError('invalid_request', `${param} ${NOT_FINITE}.`, { param });
}

/** The path (innermost first) to the first non-finite number under `value`, or undefined. */
function nonFinitePath(value: unknown, depth: number): PropertyKey[] | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : [];
  // The body reader has already refused deeper bodies; the bound only keeps direct callers off the stack's edge.
  if (value === null || typeof value !== 'object' || depth > MAX_JSON_DEPTH) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const path = nonFinitePath(value[i], depth + 1);
      if (path !== undefined) {
        path.push(i);
        return path;
      }
    }
    return undefined;
  }
  for (const key in value) {
    const path = nonFinitePath((value as Record<string, unknown>)[key], depth + 1);
    if (path !== undefined) {
      path.push(key);
      return path;
    }
  }
  return undefined;
}
