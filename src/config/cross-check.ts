// Checks of a whole config beyond its schema, and the salvage of a config
// that failed it, so that every problem is reported in one round.
import { z } from 'zod';
import { adminSchema, keySchema, mcpAccessSchema, orgSchema, teamSchema, passthroughSchema, pluginEntrySchema, redisSchema, routeSchema, upstreamSchema, TEAM_NAME, type ConfigView } from './schema';

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

const valid = <T>(schema: z.ZodType<T>, value: unknown): T | undefined => {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
};

/**
 * The fields of an object that pass on their own (an absent one with a
 * default gets it); fields the schema does not know stay as given, for the
 * checks of the fields plugins add.
 */
function validFields<S extends z.ZodObject>(schema: S, value: unknown): Partial<z.infer<S>> | undefined {
  if (!isMap(value)) return undefined;
  const whole = schema.safeParse(value);
  if (whole.success) return whole.data;
  const shape = schema.shape as Record<string, z.ZodType>;
  const out: Record<string, unknown> = {};
  for (const [name, given] of Object.entries(value)) {
    if (!Object.hasOwn(shape, name)) { out[name] = given; continue; }
    const parsed = shape[name].safeParse(given);
    if (parsed.success && parsed.data !== undefined) out[name] = parsed.data;
  }
  for (const [name, field] of Object.entries(shape)) {
    if (name in out || name in value) continue;
    const parsed = field.safeParse(undefined);
    if (parsed.success && parsed.data !== undefined) out[name] = parsed.data;
  }
  return out as Partial<z.infer<S>>;
}

const listOf = <T>(value: unknown, item: (v: unknown) => T | undefined): Array<T | undefined> | undefined =>
  value === undefined || value === null ? [] : Array.isArray(value) ? value.map(item) : undefined;
const mapOf = <T>(value: unknown, entry: (v: unknown) => T | undefined): Record<string, T | undefined> | undefined =>
  value === undefined || value === null ? {} : isMap(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, entry(v)])) : undefined;

/** What of a config that failed the schema is still worth cross-checking. */
export function salvageConfig(raw: unknown): ConfigView {
  const o = isMap(raw) ? raw : {};
  return {
    redis: valid(redisSchema.optional(), o.redis),
    admin: valid(adminSchema.optional(), o.admin),
    keys: listOf(o.keys, (v) => validFields(keySchema, v)),
    orgs: mapOf(o.orgs, (v) => valid(orgSchema, v)),
    teams: mapOf(o.teams, (v) => validFields(teamSchema, v)),
    upstreams: mapOf(o.upstreams, (v) => validFields(upstreamSchema, v)),
    routes: listOf(o.routes, (v) => validFields(routeSchema, v)),
    passthrough: listOf(o.passthrough, (v) => validFields(passthroughSchema, v)),
    mcp: isMap(o.mcp) ? { servers: mapOf(o.mcp.servers, (v) => v), oauth: isMap(o.mcp.oauth) ? { scopes: mapOf(o.mcp.oauth.scopes, (v) => valid(mcpAccessSchema, v)) } : undefined } : undefined,
    plugins: listOf(o.plugins, (v) => valid(pluginEntrySchema, v)),
    pricing: Array.isArray(o.pricing) ? o.pricing : undefined,
  };
}

/** Why a key of `org` may not belong to team `name` of org `owner` (undefined: no such team), or undefined when it may. */
export function teamProblem(name: string, owner: string | undefined, org: string | undefined): string | undefined {
  if (owner === undefined) return `unknown team "${name}"`;
  if (owner === org) return undefined;
  return org === undefined ? `team "${name}" belongs to org "${owner}": give the key org "${owner}"` : `team "${name}" belongs to org "${owner}", not to the key's org "${org}"`;
}

/**
 * Problems a schema cannot see: references between sections. Items that
 * failed the schema are skipped (the schema named them), and a reference
 * into a section that is not a map at all is not checked.
 */
export function crossCheck(config: ConfigView): string[] {
  const problems: string[] = [];
  const { orgs, upstreams } = config;
  const seenIds = new Set<string>();
  const seenDigests = new Set<string>();
  config.keys?.forEach((key, i) => {
    if (key === undefined) return;
    if (key.id !== undefined && seenIds.has(key.id)) problems.push(`keys[${i}].id: duplicate key id "${key.id}"`);
    if (key.sha256 !== undefined && seenDigests.has(key.sha256)) problems.push(`keys[${i}].sha256: the same digest is listed twice`);
    if (key.id !== undefined) seenIds.add(key.id);
    if (key.sha256 !== undefined) seenDigests.add(key.sha256);
    if (key.org !== undefined && orgs !== undefined && !Object.hasOwn(orgs, key.org)) problems.push(`keys[${i}].org: unknown org "${key.org}"`);
    const teams = config.teams;
    if (key.team !== undefined && teams !== undefined) {
      const known = Object.hasOwn(teams, key.team);
      const owner = known ? teams[key.team]?.org : undefined;
      // A team whose org failed the schema was named there.
      const problem = known && owner === undefined ? undefined : teamProblem(key.team, owner, key.org);
      if (problem !== undefined) problems.push(`keys[${i}].team: ${problem}`);
    }
  });
  for (const [name, team] of Object.entries(config.teams ?? {})) {
    if (!TEAM_NAME.test(name)) problems.push(`teams.${name}: a team's name must be 1-64 letters, digits, dot, dash or underscore`);
    if (team?.org !== undefined && orgs !== undefined && !Object.hasOwn(orgs, team.org)) problems.push(`teams.${name}.org: unknown org "${team.org}"`);
  }
  problems.push(...adminProblems(config), ...mcpProblems(config));
  for (const [name, upstream] of Object.entries(upstreams ?? {})) {
    if (upstream?.format === undefined) continue;
    if (upstream.format !== 'demo' && upstream.url === undefined && upstream.endpoints === undefined) problems.push(`upstreams.${name}.url: required for format ${upstream.format} (or endpoints: [{url, weight}])`);
    if (upstream.url !== undefined && upstream.endpoints !== undefined) problems.push(`upstreams.${name}.endpoints: give url (one endpoint) or endpoints, not both`);
    if (upstream.format === 'demo' && upstream.endpoints !== undefined) problems.push(`upstreams.${name}.endpoints: the demo backend is one endpoint (url sets its address)`);
    if (upstream.picker === 'affinity' && upstream.affinity === undefined) problems.push(`upstreams.${name}.affinity: picker affinity needs affinity: {header: <name>} (for example x-session-id)`);
    if (upstream.picker === 'scored' && upstream.engineMetrics === undefined) problems.push(`upstreams.${name}.engineMetrics: picker scored ranks endpoints on their engine metrics: give engineMetrics: {path, flavour}`);
  }
  config.routes?.forEach((route, i) => {
    // Both at once would leave the operator's intent to a rule of precedence.
    route?.fields?.drop.forEach((name, j) => {
      if (route.fields!.refuse.includes(name)) problems.push(`routes[${i}].fields.drop[${j}]: "${name}" is also in fields.refuse; list it in one of the two`);
    });
    if (route?.upstream === undefined || upstreams === undefined) return;
    if (!Object.hasOwn(upstreams, route.upstream)) return void problems.push(`routes[${i}].upstream: unknown upstream "${route.upstream}"`);
    const format = upstreams[route.upstream]?.format;
    // A native or demo backend speaks the interface alone: OpenAI's message forms would reach it unchecked.
    if (route.dialect === 'openai' && format !== undefined && format !== 'openai') problems.push(`routes[${i}].dialect: openai needs an upstream of format openai; "${route.upstream}" is ${format}`);
  });
  config.passthrough?.forEach((route, i) => {
    if (route?.upstream === undefined || upstreams === undefined) return;
    if (!Object.hasOwn(upstreams, route.upstream)) return void problems.push(`passthrough[${i}].upstream: unknown upstream "${route.upstream}"`);
    // The demo backend serves chat and images only: nothing else of it to pass through.
    if (upstreams[route.upstream]?.format === 'demo') problems.push(`passthrough[${i}].upstream: "${route.upstream}" is the built-in demo backend; pass-through needs a backend of format openai or native`);
    if (upstreams[route.upstream]?.endpoints !== undefined) problems.push(`passthrough[${i}].upstream: "${route.upstream}" is a fleet (endpoints); pass-through goes to an upstream with one url`);
  });
  for (const [name, upstream] of Object.entries(upstreams ?? {})) {
    if (upstream?.dialect === 'openai' && upstream.format !== undefined && upstream.format !== 'openai') problems.push(`upstreams.${name}.dialect: openai needs format openai, not ${upstream.format}`);
  }
  if (config.redis && config.redis.url === undefined && config.redis.nodes === undefined) {
    problems.push('redis: give either url (one server) or nodes (a cluster)');
  }
  if (config.redis?.url !== undefined && config.redis.nodes !== undefined) {
    problems.push('redis: give url or nodes, not both');
  }
  return problems;
}

/** An admin listener needs an admin key, and an admin key is never a gateway key (it would pass both doors). */
function adminProblems({ admin, keys }: ConfigView): string[] {
  if (admin === undefined) return [];
  const problems: string[] = [];
  if (admin.port !== 0 && admin.keys.length === 0 && admin.readKeys.length === 0) problems.push('admin.keys: the admin listener (admin.port) needs at least one admin key\'s SHA-256 digest (sluice keys create --admin)');
  admin.keys.forEach((digest, i) => {
    const j = keys?.findIndex((k) => k?.sha256 === digest) ?? -1;
    if (j !== -1) problems.push(`admin.keys[${i}]: the digest of a gateway key (keys[${j}]); an admin key must be a key of its own`);
  });
  admin.readKeys.forEach((digest, i) => {
    const j = keys?.findIndex((k) => k?.sha256 === digest) ?? -1;
    if (j !== -1) problems.push(`admin.readKeys[${i}]: the digest of a gateway key (keys[${j}]); an admin key must be a key of its own`);
    if (admin.keys.includes(digest)) problems.push(`admin.readKeys[${i}]: also in admin.keys; a key is read-only or not, list it once`);
  });
  return problems;
}

const isGlob = (name: string): boolean => /[*?]/.test(name);

/** A key, org or access-token scope that names an MCP server (by its exact name, or in a tool's or a limit's "<server>/") the config does not hold: a typo that would allow (or limit) nothing. */
function mcpProblems({ keys, orgs, mcp }: ConfigView): string[] {
  // Not a map at all: the schema said so, and no name can be checked.
  if (mcp !== undefined && mcp.servers === undefined) return [];
  const servers = mcp?.servers ?? {};
  const problems: string[] = [];
  const named = (tool: string): boolean => {
    const server = tool.slice(0, tool.indexOf('/'));
    return isGlob(server) || Object.hasOwn(servers, server);
  };
  const check = (where: string, access: { servers?: string[]; tools?: string[]; limits?: Readonly<Record<string, unknown>> } | undefined): void => {
    access?.servers?.forEach((name, j) => {
      if (!isGlob(name) && !Object.hasOwn(servers, name)) problems.push(`${where}.servers[${j}]: no MCP server "${name}" under mcp.servers`);
    });
    access?.tools?.forEach((tool, j) => {
      if (!named(tool)) problems.push(`${where}.tools[${j}]: no MCP server "${tool.slice(0, tool.indexOf('/'))}" under mcp.servers`);
    });
    for (const tool of Object.keys(access?.limits ?? {})) {
      if (tool.includes('/') && !named(tool)) problems.push(`${where}.limits.${tool}: no MCP server "${tool.slice(0, tool.indexOf('/'))}" under mcp.servers`);
    }
  };
  keys?.forEach((key, i) => check(`keys[${i}].mcp`, key?.mcp));
  for (const [name, org] of Object.entries(orgs ?? {})) check(`orgs.${name}.mcp`, org?.mcp);
  for (const [scope, grant] of Object.entries(mcp?.oauth?.scopes ?? {})) check(`mcp.oauth.scopes.${scope}`, grant);
  return problems;
}
