// Turns schema issues into "path: what to fix" lines. Shared by the config
// loader and request validation so both name the offending input the same way.
import type { z } from 'zod';

export type Issue = z.core.$ZodIssue;

/** ['messages', 2, 'role'] → "messages[2].role" */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/**
 * The issue worth reporting. A union that failed in every branch says only
 * "invalid input"; the branch that got furthest (the longest path) names
 * what to fix, e.g. messages[0].content[0].type rather than messages[0].content.
 */
export function innermostIssue(issue: Issue): Issue {
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  let best: Issue = issue;
  for (const branch of issue.errors) {
    if (branch.length === 0) continue;
    const inner = innermostIssue(branch[0]);
    if (inner.path.length > 0 && issue.path.length + inner.path.length > best.path.length) best = { ...inner, path: [...issue.path, ...inner.path] } as Issue;
  }
  return best;
}

/** The path an issue is about; for unknown keys, the first unknown key itself. */
export function issuePath(issue: Issue): string {
  if (issue.code === 'unrecognized_keys') return formatPath([...issue.path, issue.keys[0]]);
  return formatPath(issue.path);
}

/**
 * A config issue as [path, what to fix] pairs under `prefix`: one per unknown
 * field (zod names them all in one issue), so five typos are five problems.
 */
export function configIssues(issue: Issue, prefix: ReadonlyArray<PropertyKey> = []): Array<[path: string, problem: string]> {
  if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => [formatPath([...prefix, ...issue.path, key]), 'unknown field']);
  return [[formatPath([...prefix, ...issue.path]) || '(root)', issue.message]];
}

/** What is wrong with a number beyond a double's range (JSON.parse makes it ±Infinity). */
export const NOT_FINITE = 'is a number too large to represent; send one within ±1.7e308';

/** A sentence that names the input and says what it must be. */
export function describeIssue(issue: Issue): string {
  const where = issuePath(issue) || 'body';
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `${where} is required`;
      // JSON.parse reads 1e400 as Infinity, which no schema takes: "must be a number, got a number" helps nobody.
      if (typeof issue.input === 'number' && !Number.isFinite(issue.input)) return `${where} ${NOT_FINITE}`;
      return `${where} must be ${article(issue.expected)}, got ${typeName(issue.input)}`;
    case 'unrecognized_keys':
      return `${where} is not a known field`;
    case 'invalid_value':
      return `${where} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union': {
      if ('options' in issue && Array.isArray(issue.options)) return `${where} must be one of ${issue.options.map((v) => JSON.stringify(v)).join(', ')}`;
      // Every branch wanted another type: say which types are accepted.
      const types = issue.errors.map((b) => (b[0]?.code === 'invalid_type' && b[0].path.length === 0 ? article(b[0].expected) : undefined));
      if (types.length > 0 && types.every((t) => t !== undefined)) return `${where} must be ${[...new Set(types)].join(' or ')}${'input' in issue ? `, got ${typeName(issue.input)}` : ''}`;
      return `${where} is not valid here`;
    }
    case 'too_small':
      return issue.origin === 'array' ? `${where} must have at least ${issue.minimum} item(s)`
        : issue.origin === 'string' ? `${where} must not be empty`
        : `${where} must be at least ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'array' ? `${where} must have at most ${issue.maximum} item(s)`
        : issue.origin === 'string' ? `${where} must be at most ${issue.maximum} characters`
        : `${where} must be at most ${issue.maximum}`;
    default:
      return `${where}: ${issue.message}`;
  }
}

function article(expected: string): string {
  if (expected === 'int') return 'an integer';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
