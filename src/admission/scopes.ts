// Which in-flight limits a request must pass, compiled once per config: its
// key's `limits.concurrency` (or `admission.keyConcurrency` when the key sets
// none), its org's, its route's `maxInFlight` (the model) and its upstream's
// `maxInFlight`. Each limited subject has one lease set: <prefix>{key:<id>}:inflight,
// {org:<name>}, {model:<route's model>}, {upstream:<name>}.
import type { GatewayConfig } from '../config/schema';
import type { Principal, Route } from '../types';
import type { ConcurrencyLimit, LeaseScope } from './types';

export type { ConcurrencyLimit, LeaseScope };
export type Priority = 'high' | 'normal' | 'low';
export const PRIORITIES: readonly Priority[] = ['high', 'normal', 'low'];

export interface KeyLimits {
  readonly limits: readonly ConcurrencyLimit[];
  /** Index in PRIORITIES: 0 is high. */
  readonly rank: number;
}

export interface Scopes {
  keys: ReadonlyMap<string, KeyLimits>;
  routes: ReadonlyArray<ConcurrencyLimit | undefined>;
  upstreams: ReadonlyMap<string, ConcurrencyLimit>;
  /** Whether the config sets any in-flight limit at all: without one, admission costs nothing. */
  any: boolean;
}

export const limitOf = (prefix: string, scope: LeaseScope, name: string, limit: number | undefined): ConcurrencyLimit[] =>
  (limit === undefined ? [] : [{ scope, name, limit, key: `${prefix}{${scope}:${name}}:inflight` }]);

export function compileScopes(config: GatewayConfig, prefix: string): Scopes {
  const orgs = new Map<string, ConcurrencyLimit[]>();
  for (const [name, org] of Object.entries(config.orgs)) orgs.set(name, limitOf(prefix, 'org', name, org.limits?.concurrency));
  const keys = new Map<string, KeyLimits>();
  let any = false;
  for (const key of config.keys) {
    const own = limitOf(prefix, 'key', key.id, key.limits?.concurrency ?? config.admission.keyConcurrency);
    const limits = [...own, ...(key.org === undefined ? [] : orgs.get(key.org) ?? [])];
    if (limits.length > 0) any = true;
    keys.set(key.id, { limits, rank: PRIORITIES.indexOf(key.priority ?? 'normal') });
  }
  const upstreams = new Map<string, ConcurrencyLimit>();
  for (const [name, upstream] of Object.entries(config.upstreams)) {
    const [limit] = limitOf(prefix, 'upstream', name, upstream.maxInFlight);
    if (limit !== undefined) upstreams.set(name, limit);
  }
  const routes = config.routes.map((r) => limitOf(prefix, 'model', r.model, r.maxInFlight)[0]);
  any ||= upstreams.size > 0 || routes.some((r) => r !== undefined);
  return { keys, routes, upstreams, any };
}

const NORMAL = PRIORITIES.indexOf('normal');

/** The in-flight limits of a key (its own and its org's), and its priority. */
export function keyLimitsOf(scopes: Scopes, principal: Principal | undefined): KeyLimits | undefined {
  return principal === undefined ? undefined : scopes.keys.get(principal.id);
}

/** The in-flight limits of a route: its model's and its upstream's. */
export function routeLimitsOf(scopes: Scopes, route: Route | undefined): ConcurrencyLimit[] {
  if (route === undefined) return [];
  const out: ConcurrencyLimit[] = [];
  const model = scopes.routes[route.index];
  if (model !== undefined) out.push(model);
  const upstream = scopes.upstreams.get(route.upstream);
  if (upstream !== undefined) out.push(upstream);
  return out;
}

export const rankOf = (own: KeyLimits | undefined): number => own?.rank ?? NORMAL;
