// Maps (model, endpoint, version) to an upstream: first matching route wins.
// Globs compile once at load; resolved answers are cached per config, bounded.
import { AUDIO_ENDPOINTS, ENDPOINTS, INPUT_ENDPOINTS, type Endpoint, type RouteConfig, type UpstreamConfig, type Version } from '../config/schema';
import type { Route } from '../contract/types';
import { compileGlob, isGlob, type Matcher } from '../auth/glob';

export type { Route } from '../contract/types';

export interface ListedModel {
  id: string;
  endpoints: Endpoint[];
}

export interface RouteTable {
  resolve(model: string, endpoint: Endpoint, version: Version): Route | undefined;
  /** Exact model ids reachable on this version, with the endpoints each serves. */
  listed(version: Version): readonly ListedModel[];
}

interface CompiledRoute extends Route {
  matches: Matcher;
  endpoints: ReadonlySet<Endpoint>;
  versions: ReadonlySet<Version>;
}

const CACHE_LIMIT = 4096;
const OPENAI_ONLY = [...INPUT_ENDPOINTS, ...AUDIO_ENDPOINTS];

/** The configured model ids: each route's model unless it is a glob, plus the ids a glob route advertises. */
export function exactModelIds(routes: readonly RouteConfig[]): string[] {
  return [...new Set(routes.flatMap((r) => (isGlob(r.model) ? r.advertise ?? [] : [r.model])))];
}

/** A glob route's advertised ids must be exact ids it matches. Checks what passed the schema (see ConfigView). */
export function advertiseProblems(routes: ReadonlyArray<Partial<RouteConfig> | undefined>): string[] {
  const problems: string[] = [];
  routes.forEach((r, i) => {
    if (r?.advertise === undefined || r.model === undefined) return;
    const matches = compileGlob(r.model);
    r.advertise.forEach((id, j) => {
      if (isGlob(id) || !matches(id)) problems.push(`routes[${i}].advertise[${j}]: "${id}" is not an exact model id matched by "${r.model}"`);
    });
  });
  return problems;
}

export function compileRoutes(routes: readonly RouteConfig[], problems: string[] = [], upstreams: Readonly<Record<string, Partial<Pick<UpstreamConfig, 'dialect' | 'format'>>>> = {}): RouteTable {
  const compiled: CompiledRoute[] = routes.map((r, index) => ({
    index,
    upstream: r.upstream,
    upstreamModel: r.upstreamModel,
    dialect: r.dialect ?? upstreams[r.upstream]?.dialect ?? 'interface',
    fallbacks: r.fallbacks ?? [],
    failoverOn: r.failoverOn ?? [],
    continueOnFailure: r.continueOnFailure ?? false,
    assistantPrefix: r.assistantPrefix,
    hostedTools: r.hostedTools ?? 'drop',
    fields: r.fields,
    matches: compileGlob(r.model),
    endpoints: new Set(r.endpoints),
    versions: new Set(r.versions),
  }));
  problems.push(...advertiseProblems(routes));
  // A content-policy refusal would only be refused again, by a backend that should not see it.
  routes.forEach((r, i) => r.failoverOn?.forEach((code, j) => {
    if (/content[_-]?(policy|filter)/i.test(code)) problems.push(`routes[${i}].failoverOn[${j}]: "${code}" is a content-policy refusal, which is never failed over`);
  }));
  // A fallback no route serves would silently never answer.
  routes.forEach((r, i) => r.fallbacks?.forEach((id, j) => {
    if (isGlob(id)) problems.push(`routes[${i}].fallbacks[${j}]: "${id}" must be an exact model id`);
    else if (!compiled.some((c) => c.index !== i && c.matches(id))) problems.push(`routes[${i}].fallbacks[${j}]: no other route serves "${id}"`);
  }));
  routes.forEach((r, i) => {
    const format = upstreams[r.upstream]?.format;
    // The input and audio endpoints are OpenAI's and vLLM's paths: a backend of another format serves none of them.
    const inputs = (r.endpoints ?? []).filter((e) => (OPENAI_ONLY as readonly string[]).includes(e));
    if (inputs.length > 0 && format !== undefined && format !== 'openai') problems.push(`routes[${i}].endpoints: ${inputs.join(', ')} need an upstream of format openai; "${r.upstream}" is ${format}`);
    if (r.assistantPrefix !== undefined && format !== undefined && format !== 'openai') problems.push(`routes[${i}].assistantPrefix: continuing an assistant message needs an upstream of format openai; "${r.upstream}" is ${format}`);
    // Continuation with nowhere to continue would silently never happen.
    if (r.continueOnFailure && !r.fallbacks?.some((id) => routes.some((o, j) => j !== i && o.assistantPrefix !== undefined && compiled[j].matches(id)))) {
      problems.push(`routes[${i}].continueOnFailure: none of its fallbacks is served by a route with assistantPrefix`);
    }
  });

  // Only answers that found a route are cached, so ids a client makes up cannot fill it.
  const cache = new Map<string, Route>();
  const resolve = (model: string, endpoint: Endpoint, version: Version): Route | undefined => {
    const cacheKey = `${version}\u0000${endpoint}\u0000${model}`;
    const hit = cache.get(cacheKey);
    if (hit !== undefined) return hit;
    const found = compiled.find((r) => r.versions.has(version) && r.endpoints.has(endpoint) && r.matches(model));
    if (found !== undefined && cache.size < CACHE_LIMIT) cache.set(cacheKey, found);
    return found;
  };

  const candidates = exactModelIds(routes);
  const listing = new Map<Version, ListedModel[]>();
  for (const version of ['v1', 'v2'] as const) {
    listing.set(version, candidates
      .map((id) => ({ id, endpoints: ENDPOINTS.filter((e) => resolve(id, e, version) !== undefined) }))
      .filter((m) => m.endpoints.length > 0));
  }
  return { resolve, listed: (version) => listing.get(version) ?? [] };
}
