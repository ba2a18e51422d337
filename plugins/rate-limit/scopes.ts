// Which in-flight limits a request must pass, compiled once per config: its
// key's `limits.concurrency` (or the plugin's defaults), its org's, its
// route's `maxInFlight` (the model) and its upstream's `maxInFlight`. Each
// limited subject has one lease set: <prefix>{key:<id>}:inflight,
// {org:<name>}, {model:<route's model>}, {upstream:<name>}.
import type { Budget, GatewayConfig, RequestContext } from '../../src';

export type LeaseScope = 'key' | 'org' | 'model' | 'upstream';
export type Priority = 'high' | 'normal' | 'low';
export const PRIORITIES: readonly Priority[] = ['high', 'normal', 'low'];

export interface ConcurrencyLimit {
  readonly scope: LeaseScope;
  /** The subject's configured name (key id, org, route model, upstream): a bounded metrics label. */
  readonly name: string;
  readonly limit: number;
  /** The lease set's store key. */
  readonly key: string;
}

export interface KeyLimits {
  readonly limits: readonly ConcurrencyLimit[];
  /** Index in PRIORITIES: 0 is high. */
  readonly rank: number;
}

export interface Scopes {
  keys: ReadonlyMap<string, KeyLimits>;
  routes: ReadonlyArray<ConcurrencyLimit | undefined>;
  upstreams: ReadonlyMap<string, ConcurrencyLimit>;
}

const limitOf = (prefix: string, scope: LeaseScope, name: string, limit: number | undefined): ConcurrencyLimit[] =>
  (limit === undefined ? [] : [{ scope, name, limit, key: `${prefix}{${scope}:${name}}:inflight` }]);

export function compileScopes(config: GatewayConfig, defaults: Budget | undefined, prefix: string): Scopes {
  const orgs = new Map<string, ConcurrencyLimit[]>();
  for (const [name, org] of Object.entries(config.orgs)) orgs.set(name, limitOf(prefix, 'org', name, org.limits?.concurrency));
  const keys = new Map<string, KeyLimits>();
  for (const key of config.keys) {
    const own = limitOf(prefix, 'key', key.id, (key.limits ?? defaults)?.concurrency);
    keys.set(key.id, { limits: [...own, ...(key.org === undefined ? [] : orgs.get(key.org) ?? [])], rank: PRIORITIES.indexOf(key.priority ?? 'normal') });
  }
  const upstreams = new Map<string, ConcurrencyLimit>();
  for (const [name, upstream] of Object.entries(config.upstreams)) {
    const [limit] = limitOf(prefix, 'upstream', name, upstream.maxInFlight);
    if (limit !== undefined) upstreams.set(name, limit);
  }
  const routes = config.routes.map((r) => limitOf(prefix, 'model', r.model, r.maxInFlight)[0]);
  return { keys, routes, upstreams };
}

const NORMAL = PRIORITIES.indexOf('normal');

/** The in-flight limits one request must pass (all of them), and its key's priority. */
export function limitsOf(scopes: Scopes, ctx: RequestContext): { limits: ConcurrencyLimit[]; rank: number } {
  const own = ctx.principal === undefined ? undefined : scopes.keys.get(ctx.principal.id);
  const limits = own === undefined ? [] : [...own.limits];
  const route = ctx.route;
  if (route !== undefined) {
    const model = scopes.routes[route.index];
    if (model !== undefined) limits.push(model);
    const upstream = scopes.upstreams.get(route.upstream);
    if (upstream !== undefined) limits.push(upstream);
  }
  return { limits, rank: own?.rank ?? NORMAL };
}
