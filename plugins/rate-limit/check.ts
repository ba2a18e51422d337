// Problems of the whole config that concern this plugin's fields: a dollar
// budget without a price list would admit everything and charge nothing, so
// it is an error at load, named where the budget is.
import type { ConfigView } from '../../src';

const hasDollars = (limits: unknown): boolean => typeof limits === 'object' && limits !== null && (limits as { dollars?: unknown }).dollars !== undefined;
const perUserOf = (limits: unknown): unknown => (typeof limits === 'object' && limits !== null ? (limits as { perUser?: unknown }).perUser : undefined);

/** A per-user template is a key's or a team's: an org's end users are its keys' (docs/teams.md#end-users). */
export function checkPerUser(config: ConfigView): string[] {
  const places: string[] = [];
  for (const [name, org] of Object.entries(config.orgs ?? {})) if (perUserOf(org?.limits) !== undefined) places.push(`orgs.${name}.limits.perUser`);
  return places.map((at) => `${at}: a per-user budget goes on a key or a team (limits.perUser), whose end users it bounds`);
}

export function checkDollars(config: ConfigView): string[] {
  if ((config.pricing?.length ?? 0) > 0) return [];
  const places: string[] = [];
  config.keys?.forEach((k, i) => {
    if (hasDollars(k?.limits)) places.push(`keys[${i}].limits.dollars`);
    if (hasDollars(perUserOf(k?.limits))) places.push(`keys[${i}].limits.perUser.dollars`);
  });
  for (const [name, team] of Object.entries(config.teams ?? {})) {
    if (hasDollars(team?.limits)) places.push(`teams.${name}.limits.dollars`);
    if (hasDollars(perUserOf(team?.limits))) places.push(`teams.${name}.limits.perUser.dollars`);
  }
  for (const [name, org] of Object.entries(config.orgs ?? {})) if (hasDollars(org?.limits)) places.push(`orgs.${name}.limits.dollars`);
  config.plugins?.forEach((p, i) => { if (p?.name === 'rate-limit' && hasDollars(p.defaults)) places.push(`plugins[${i}].defaults.dollars`); });
  return places.map((at) => `${at}: a dollar budget needs prices: add a pricing section naming the models' prices (see the reference config)`);
}
