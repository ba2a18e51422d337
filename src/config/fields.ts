// The fields plugins add to keys, orgs, limits, routes and upstreams
// (PluginDefinition.fields), checked at load like the core's own: each value
// against its owner's schema, with its path; a field nobody declared is an
// unknown field; a declared one whose plugin is not in the chain would be
// silently off, so it is a problem too. Without owners (a config checked
// with no plugins known), every field beyond the core's is unknown.
import type { z } from 'zod';
import { formatPath } from './issues';
import { keySchema, limitsSchema, orgShape, routeSchema, upstreamSchema, type ConfigView, type FieldPoint } from './schema';


/** A plugin that declares fields, and whether the config runs it. */
export interface FieldOwner {
  readonly name: string;
  readonly fields?: Readonly<Partial<Record<FieldPoint, Readonly<Record<string, z.ZodType>>>>>;
  readonly active: boolean;
}

const shapeOf = (schema: z.ZodType): readonly string[] => Object.keys((schema as unknown as { shape: object }).shape);

/** The core's own fields at each point. */
const CORE: Record<FieldPoint, ReadonlySet<string>> = {
  keys: new Set(shapeOf(keySchema)),
  orgs: new Set(shapeOf(orgShape)),
  limits: new Set(shapeOf(limitsSchema)),
  routes: new Set(shapeOf(routeSchema)),
  upstreams: new Set(shapeOf(upstreamSchema)),
};

/** The schema `owner` declares for `field` at `point`: its own entries only, so a field named toString or constructor is a name like any other. */
function declared(owner: FieldOwner, point: FieldPoint, field: string): z.ZodType | undefined {
  const fields = owner.fields?.[point];
  return fields !== undefined && Object.hasOwn(fields, field) ? fields[field] : undefined;
}

type Item = readonly [point: FieldPoint, path: ReadonlyArray<string | number>, value: unknown];

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every object of the config a plugin may add fields to, with its path. */
function items(config: ConfigView): Item[] {
  const out: Item[] = [];
  config.keys?.forEach((key, i) => {
    out.push(['keys', ['keys', i], key]);
    if (isMap(key) && isMap(key.limits)) out.push(['limits', ['keys', i, 'limits'], key.limits]);
  });
  for (const [name, org] of Object.entries(config.orgs ?? {})) {
    out.push(['orgs', ['orgs', name], org]);
    if (isMap(org) && isMap(org.limits)) out.push(['limits', ['orgs', name, 'limits'], org.limits]);
  }
  for (const [name, team] of Object.entries(config.teams ?? {})) {
    if (isMap(team) && isMap(team.limits)) out.push(['limits', ['teams', name, 'limits'], team.limits]);
  }
  config.routes?.forEach((route, i) => out.push(['routes', ['routes', i], route]));
  for (const [name, upstream] of Object.entries(config.upstreams ?? {})) out.push(['upstreams', ['upstreams', name], upstream]);
  return out;
}

export function fieldProblems(config: ConfigView, owners: readonly FieldOwner[]): string[] {
  const problems: string[] = [];
  for (const [point, path, value] of items(config)) {
    if (!isMap(value)) continue;
    for (const field of Object.keys(value)) {
      if (CORE[point].has(field)) continue;
      const where = [...path, field];
      const owner = owners.find((d) => declared(d, point, field) !== undefined);
      if (owner === undefined) {
        problems.push(`${formatPath(where)}: unknown field`);
        continue;
      }
      const parsed = declared(owner, point, field)!.safeParse(value[field]);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) problems.push(`${formatPath([...where, ...(issue.path as Array<string | number>)])}: ${issue.message}`);
      } else if (!owner.active) {
        problems.push(`${formatPath(where)}: ${field} needs the ${owner.name} plugin; add "- { name: ${owner.name} }" to plugins`);
      }
    }
  }
  return problems;
}
