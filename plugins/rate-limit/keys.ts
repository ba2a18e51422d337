// Store keys. Every key of one subject (an end user, a key id, a team or an
// org) carries the same hash tag, `{user:key/<id>/<user>}` (or
// `{user:team/<name>/<user>}` for a team's template), `{key:<id>}`,
// `{team:<name>}` or `{org:<name>}`, so on a
// Redis Cluster its request, token and dollar counters live in one slot;
// `redis.prefix` comes first and namespaces them all:
// sluice:{key:ci-bot}:requests, sluice:{team:search}:tokens,
// sluice:{org:acme}:dollars:2026-11 (a calendar window's count: one key a month)

/** The levels a request's budgets come from, narrowest first: a refusal names its level (the error's `param`). */
export const LEVELS = ['user', 'key', 'team', 'org'] as const;
export type Scope = typeof LEVELS[number];
export type BudgetKind = 'requests' | 'tokens' | 'dollars';

export const hashTag = (scope: Scope, id: string): string => `{${scope}:${id}}`;

export const storeKey = (prefix: string, scope: Scope, id: string, kind: BudgetKind): string => `${prefix}${hashTag(scope, id)}:${kind}`;

/** The slot-deciding part of a key, as Redis Cluster computes it (for tests and operators). */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  return close === -1 || close === open + 1 ? key : key.slice(open + 1, close);
}
