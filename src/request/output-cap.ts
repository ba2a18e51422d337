// The output caps a backend may read: max_tokens, max_completion_tokens and
// max_output_tokens. Servers differ in which one they read first (vLLM and
// SGLang take max_completion_tokens over max_tokens, and coerce "100000" to a
// number), so every one a request carries is checked at the edge as a
// non-negative integer, and one cap wins: the smallest given, written into
// every cap field the request carries. Whatever field a backend reads, it
// reads the cap the budgets reserved for.
//
//   params = unifyOutputCaps(params);               // at the edge
//   params = withOutputCap(params, 64, 'max_tokens'); // a budget lowers it
import { z } from 'zod';

export const OUTPUT_CAP_FIELDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const;

/** One cap field as the edge takes it: a non-negative integer, or null for the model's default. */
export const capField = z.number().int().min(0).nullable().optional();

/** The cap a request names: the smallest of its cap fields (null and absent ones are no cap); undefined when none. */
export function outputCapOf(fields: Readonly<Record<string, unknown>>): number | undefined {
  let cap: number | undefined;
  for (const name of OUTPUT_CAP_FIELDS) {
    const v = fields[name];
    if (typeof v === 'number' && (cap === undefined || v < cap)) cap = v;
  }
  return cap;
}

/**
 * `fields` with every cap field it carries set to `cap`, and `primary` too
 * when given (the protocol's own field, written even when absent). The same
 * object when nothing changes, else a copy.
 */
export function withOutputCap<T extends object>(fields: T, cap: number, primary?: (typeof OUTPUT_CAP_FIELDS)[number]): T {
  const source = fields as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const name of OUTPUT_CAP_FIELDS) {
    const v = source[name];
    if (v === cap || (typeof v !== 'number' && name !== primary)) continue;
    out ??= { ...source };
    out[name] = cap;
  }
  return (out ?? fields) as T;
}

/**
 * One cap wins: the smallest the request names, in every cap field it names,
 * and in `primary` (the field the protocol's backends read) when it names one
 * at all, so a cap named only in another protocol's field still binds.
 */
export function unifyOutputCaps<T extends object>(fields: T, primary?: (typeof OUTPUT_CAP_FIELDS)[number]): T {
  const cap = outputCapOf(fields as Record<string, unknown>);
  return cap === undefined ? fields : withOutputCap(fields, cap, primary);
}
