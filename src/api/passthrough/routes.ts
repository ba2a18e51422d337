// The pass-through table: which configured route a request's method and path
// reach. Paths are compiled when the config loads; a request is matched by a
// string comparison or a prefix and one precompiled regex, first route wins.
//
//   passthrough:
//     - { path: /v1/embeddings, upstream: vllm }
//     - { path: "/v1/audio/*", upstream: whisper, methods: [POST], bodyLimit: 25mb }
import { AUDIO_ENDPOINTS, INPUT_ENDPOINTS, PASSTHROUGH_SEGMENT, type GatewayConfig, type PassthroughConfig, type Version } from '../../config/schema';

export interface PassthroughRoute {
  /** Its position under `passthrough:`, for logs. */
  index: number;
  version: Version;
  upstream: string;
  /** The model the key's allow-list checks when the request names none. */
  model?: string;
  bodyLimit: number;
}

/** What a request reached: a route, or a path some route serves with other methods (405, `allow`). */
export type PassthroughMatch = { route: PassthroughRoute } | { allow: string };

export interface PassthroughTable {
  /** undefined when no route serves the path: the request goes on to the 404. */
  match(method: string, url: string): PassthroughMatch | undefined;
}

interface CompiledPath {
  /** The exact path, or the prefix (ending in "/") a wildcard path serves everything below. */
  path: string;
  wildcard: boolean;
}

// What a wildcard may match below its prefix: the segments a configured path may hold, nothing a backend would decode.
const BELOW = new RegExp(`^${PASSTHROUGH_SEGMENT}(?:/${PASSTHROUGH_SEGMENT})*$`);

const compilePath = (path: string): CompiledPath =>
  path.endsWith('/*') ? { path: path.slice(0, -1), wildcard: true } : { path, wildcard: false };

function pathMatches(p: CompiledPath, path: string): boolean {
  if (!p.wildcard) return path === p.path;
  return path.length > p.path.length && path.startsWith(p.path) && BELOW.test(path.slice(p.path.length));
}

/** True when every path `later` serves is one `earlier` serves too. */
function covers(earlier: CompiledPath, later: CompiledPath): boolean {
  if (!earlier.wildcard) return !later.wildcard && later.path === earlier.path;
  return later.path.startsWith(earlier.path) && (later.wildcard || later.path.length > earlier.path.length);
}

// The gateway's own endpoints (one sample id for /models/{id}): a pass-through route must leave them alone.
const OWN_ENDPOINTS = ['v1', 'v2'].flatMap((v) => [`/${v}/chat/completions`, `/${v}/images/generations`, `/${v}/models`, `/${v}/models/{id}`]);

/** HEAD is answered wherever GET is, as for the gateway's own GET endpoints. */
const withHead = (methods: readonly string[]): string[] => (methods.includes('GET') && !methods.includes('HEAD') ? [...methods, 'HEAD'] : [...methods]);

/**
 * What the schema cannot see: a path that takes over one of the gateway's own
 * endpoints, or a route never reached because earlier ones serve all its
 * paths and methods. Checks what passed the schema (see ConfigView).
 */
export function passthroughProblems(routes: ReadonlyArray<Partial<PassthroughConfig> | undefined>): string[] {
  const problems: string[] = [];
  const seen: Array<{ path: CompiledPath; methods: readonly string[]; at: number }> = [];
  routes.forEach((route, i) => {
    if (route?.path === undefined) return;
    const path = compilePath(route.path);
    const own = OWN_ENDPOINTS.find((endpoint) => pathMatches(path, endpoint.replace('{id}', 'id')));
    if (own !== undefined) problems.push(`passthrough[${i}].path: "${route.path}" would take over the gateway's own endpoint ${own}`);
    const methods = route.methods ?? ['POST'];
    const before = seen.filter((s) => covers(s.path, path));
    const served = new Set(before.flatMap((s) => s.methods));
    if (before.length > 0 && methods.every((m) => served.has(m))) {
      problems.push(`passthrough[${i}].path: never reached: ${before.map((s) => `passthrough[${s.at}]`).join(' and ')} come${before.length === 1 ? 's' : ''} first and serve${before.length === 1 ? 's' : ''} "${route.path}" for ${methods.join(', ')}`);
    }
    seen.push({ path, methods, at: i });
  });
  return problems;
}

/**
 * The input and audio endpoints (embeddings, ..., audio/speech) that a
 * pass-through route takes before the gateway's own endpoint can: each with
 * the route's index. Not a config error (such a route keeps working as it
 * did before the gateway served the path), only worth a warning.
 */
export function shadowedEndpoints(routes: readonly PassthroughConfig[]): Array<{ index: number; path: string }> {
  const shadowed: Array<{ index: number; path: string }> = [];
  for (const v of ['v1', 'v2']) {
    for (const endpoint of [...INPUT_ENDPOINTS, ...AUDIO_ENDPOINTS.map((e) => `audio/${e}`)]) {
      const path = `/${v}/${endpoint}`;
      const index = routes.findIndex((r) => (r.methods ?? ['POST']).includes('POST') && pathMatches(compilePath(r.path), path));
      if (index >= 0) shadowed.push({ index, path });
    }
  }
  return shadowed;
}

export function compilePassthrough(config: Pick<GatewayConfig, 'passthrough' | 'server'>): PassthroughTable {
  const defaultBodyLimit = config.server.bodyLimit;
  const compiled = config.passthrough.map((r, index) => ({
    path: compilePath(r.path),
    methods: new Set(withHead(r.methods)),
    allow: withHead(r.methods).join(', '),
    route: { index, version: r.path.slice(1, 3) as Version, upstream: r.upstream, model: r.model, bodyLimit: r.bodyLimit ?? defaultBodyLimit } satisfies PassthroughRoute,
  }));
  return {
    match(method, url) {
      if (compiled.length === 0) return undefined;
      const q = url.indexOf('?');
      const path = q === -1 ? url : url.slice(0, q);
      let allow: Set<string> | undefined;
      for (const c of compiled) {
        if (!pathMatches(c.path, path)) continue;
        if (c.methods.has(method)) return { route: c.route };
        allow ??= new Set();
        for (const m of c.methods) allow.add(m);
      }
      return allow === undefined ? undefined : { allow: [...allow].join(', ') };
    },
  };
}
