// Which in-flight limits a request must pass: its key's `limits.concurrency`
// (or `admission.keyConcurrency` when the key sets none), its org's, its
// route's `maxInFlight` (the model) and its upstream's `maxInFlight`. Orgs,
// routes and upstreams are compiled once per config; a key's limits once per
// principal, at its first request, so a key made or changed at runtime (the
// admin API) is a new principal and gets its own. Each limited subject has
// one lease set: <prefix>{key:<id>}:inflight, {org:<name>}, {model:<route's model>}, {upstream:<name>}.
import type { GatewayConfig } from '../config/schema';
import type { Principal, Route } from '../contract/types';
import type { ConcurrencyLimit, LeaseScope } from '../contract/admission';

export type { ConcurrencyLimit, LeaseScope };
export type Priority = 'high' | 'normal' | 'low';
export const PRIORITIES: readonly Priority[] = ['high', 'normal', 'low'];

export interface KeyLimits {
  readonly limits: readonly ConcurrencyLimit[];
  /** Index in PRIORITIES: 0 is high. */
  readonly rank: number;
}

export interface Scopes {
  /** A key's own limits and its org's, and its rank, made at its first request. */
  keyLimits(principal: Principal): KeyLimits;
  routes: ReadonlyArray<ConcurrencyLimit | undefined>;
  upstreams: ReadonlyMap<string, ConcurrencyLimit>;
  /** Whether the config sets any in-flight limit at all, or may get one at runtime: without one, admission costs nothing. */
  any: boolean;
}

export const limitOf = (prefix: string, scope: LeaseScope, name: string, limit: number | undefined): ConcurrencyLimit[] =>
  (limit === undefined ? [] : [{ scope, name, limit, key: `${prefix}{${scope}:${name}}:inflight` }]);

const concurrencyOf = (limits: Readonly<Record<string, unknown>> | undefined): number | undefined => limits?.concurrency as number | undefined;

export function compileScopes(config: GatewayConfig, prefix: string): Scopes {
  const orgs = new Map<string, ConcurrencyLimit[]>();
  for (const [name, org] of Object.entries(config.orgs)) orgs.set(name, limitOf(prefix, 'org', name, org.limits?.concurrency));
  const keyLimitsOf = (principal: Principal): KeyLimits => {
    const own = limitOf(prefix, 'key', principal.id, concurrencyOf(principal.entry.limits) ?? config.admission.keyConcurrency);
    return { limits: [...own, ...(principal.org === null ? [] : orgs.get(principal.org) ?? [])], rank: PRIORITIES.indexOf(principal.entry.priority ?? 'normal') };
  };
  const cache = new WeakMap<Principal, KeyLimits>();
  const upstreams = new Map<string, ConcurrencyLimit>();
  for (const [name, upstream] of Object.entries(config.upstreams)) {
    const [limit] = limitOf(prefix, 'upstream', name, upstream.maxInFlight);
    if (limit !== undefined) upstreams.set(name, limit);
  }
  const routes = config.routes.map((r) => limitOf(prefix, 'model', r.model, r.maxInFlight)[0]);
  // Runtime keys (an admin section) may bring a concurrency limit without a reload.
  const limited = (k: GatewayConfig['keys'][number]): boolean =>
    (k.limits?.concurrency ?? config.admission.keyConcurrency) !== undefined || (k.org !== undefined && (orgs.get(k.org)?.length ?? 0) > 0);
  const any = config.admin !== undefined || config.keys.some(limited) || upstreams.size > 0 || routes.some((r) => r !== undefined);
  return {
    keyLimits(principal) {
      let found = cache.get(principal);
      if (found === undefined) cache.set(principal, (found = keyLimitsOf(principal)));
      return found;
    },
    routes,
    upstreams,
    any,
  };
}

const NORMAL = PRIORITIES.indexOf('normal');

/** The in-flight limits of a key (its own and its org's), and its priority. */
export function keyLimitsOf(scopes: Scopes, principal: Principal | undefined): KeyLimits | undefined {
  return principal === undefined ? undefined : scopes.keyLimits(principal);
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
