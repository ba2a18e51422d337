// Which budgets a request must pass, level by level (LEVELS): its end
// user's (the key's `limits.perUser`, else its team's, for the end user the
// request names), its key's own budgets (or the plugin's defaults when its
// entry has no `limits`), its team's and its org's: requests, tokens and dollars (counted in whole
// nano-dollars, so the counts stay integers in Redis). Orgs are compiled once
// per config; a team once per team object (a team changed through the admin
// API is a new object); a key's policy once per principal and team, at its
// first request, so a key or team made or changed through the admin API gets
// its own without a reload, and a key moved to another team is charged there
// from its next request.
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { GatewayConfig, Limiter, Principal, Team, TeamLookup } from '../../src';
import { storeKey, type BudgetKind, type Scope } from './keys';
import { budgetSchema, type Budget } from './settings';
import { CALENDAR_SECONDS, periodOf, windowText, type Period } from './windows';

export interface CompiledBudget {
  readonly scope: Scope;
  readonly kind: BudgetKind;
  /** Requests, tokens, or nano-dollars per window. */
  readonly points: number;
  /** The limiter's window (a calendar window: longer than the day or month, see windows.ts). */
  readonly windowSeconds: number;
  /** A dollar budget by the calendar: its count is kept per day or month (keyAt). */
  readonly calendar?: 'day' | 'month';
  /** How its window reads in a refusal: "per 60 seconds", "per month". */
  readonly window: string;
  readonly key: string;
  readonly limiter: Limiter;
  /** A request without an output cap is given one that fits (hard), or reserves defaultMaxTokens (soft). */
  readonly hard: boolean;
  /** x-ratelimit-limit-* value, made once. */
  readonly limitText: string;
  /** A calendar window's store key for the period it was last asked for (keyAt). */
  periodKey?: { period: Period; key: string };
}

export interface Policy {
  readonly requests: readonly CompiledBudget[];
  /** Token and dollar budgets: each reserves on admission and settles at the end. */
  readonly reserves: readonly CompiledBudget[];
  /** The token budgets alone: what a request no price names reserves in (it costs nothing). */
  readonly tokens: readonly CompiledBudget[];
  /** Some reservation budget is hard: a request without an output cap is given one. */
  readonly hard: boolean;
}

/** The store key a budget counts under at `now`: a calendar window's carries its day or month (made once a period). */
export function keyAt(b: CompiledBudget, now: number): string {
  if (b.calendar === undefined) return b.key;
  const period = periodOf(b.calendar, now);
  let at = b.periodKey;
  if (at?.period !== period) b.periodKey = at = { period, key: `${b.key}:${period.id}` };
  return at.key;
}

/** When the budget's window ends, from the limiter's answer (a calendar window: the calendar's). */
export const msBefore = (b: CompiledBudget, r: RateLimiterRes | null, now: number): number =>
  (b.calendar !== undefined ? periodOf(b.calendar, now).endsAt - now : r === null ? 0 : Math.max(r.msBeforeNext, 0));

type LimiterFor = (points: number, windowSeconds: number) => Limiter;

const NANOS = 1e9;

function budgetsOf(scope: Scope, id: string, limits: Budget | undefined, prefix: string, limiterFor: LimiterFor): CompiledBudget[] {
  const out: CompiledBudget[] = [];
  if (limits === undefined) return out;
  const { windowSeconds, hard } = limits;
  for (const kind of ['requests', 'tokens'] as const) {
    const points = limits[kind];
    if (points === undefined) continue;
    out.push({ scope, kind, points, windowSeconds, window: windowText(windowSeconds), key: storeKey(prefix, scope, id, kind), limiter: limiterFor(points, windowSeconds), hard, limitText: String(points) });
  }
  if (limits.dollars !== undefined) {
    const w = limits.dollarWindow;
    const calendar = typeof w === 'number' ? undefined : w;
    const seconds = calendar === undefined ? (w as number) : CALENDAR_SECONDS[calendar];
    const points = Math.round(limits.dollars * NANOS);
    out.push({ scope, kind: 'dollars', points, windowSeconds: seconds, calendar, window: windowText(w), key: storeKey(prefix, scope, id, 'dollars'), limiter: limiterFor(points, seconds), hard, limitText: String(limits.dollars) });
  }
  return out;
}

/** The plugin's fields of a `limits` block (checked at load by the registry), or undefined when it names no budget. */
function budgetOf(limits: unknown): Budget | undefined {
  if (limits === undefined) return undefined;
  const budget = budgetSchema.parse(limits);
  return budget.requests === undefined && budget.tokens === undefined && budget.dollars === undefined ? undefined : budget;
}

/** A key's policy for a request of `user` (its end user, if any); undefined when it has no budget at all: unlimited. */
export type PolicyOf = (principal: Principal, user?: string) => Policy | undefined;

/** The config's teams, for a plugin built without the gateway's services (its own tests). */
export function configTeams(config: GatewayConfig): TeamLookup {
  const teams = new Map(Object.entries(config.teams).map(([name, t]): [string, Team] => [name, { name, ...t }]));
  return { get: (name) => teams.get(name) };
}

/** What a policy was compiled with: a team changed or moved to is another object. */
interface Held {
  team: Team | undefined;
  policy: Policy | null;
  /** The per-user template in force (the key's, else its team's), compiled under its owner's id; its store keys are made per user. */
  perUser?: { owner: string; budgets: CompiledBudget[] };
}

const policyOf = (all: CompiledBudget[]): Policy => {
  const reserves = all.filter((b) => b.kind !== 'requests');
  return { requests: all.filter((b) => b.kind === 'requests'), reserves, tokens: reserves.filter((b) => b.kind === 'tokens'), hard: reserves.some((b) => b.hard) };
};

/** The template's budgets counted under one end user: the limiters are the template's, the store keys the user's. */
const forUser = (template: NonNullable<Held['perUser']>, user: string, prefix: string): CompiledBudget[] =>
  template.budgets.map((b) => ({ ...b, key: storeKey(prefix, 'user', `${template.owner}/${user}`, b.kind), periodKey: undefined }));

/** A per-user template of a `limits` block (`perUser`), or undefined when it has none. */
function perUserOf(limits: unknown): Budget | undefined {
  const template = (limits as { perUser?: unknown } | undefined)?.perUser;
  return template === undefined ? undefined : budgetOf(template);
}

export function compilePolicies(config: GatewayConfig, defaults: Budget | undefined, prefix: string, limiterFor: LimiterFor, teams: TeamLookup = configTeams(config)): PolicyOf {
  const orgs = new Map<string, CompiledBudget[]>();
  for (const [name, org] of Object.entries(config.orgs)) orgs.set(name, budgetsOf('org', name, budgetOf(org.limits), prefix, limiterFor));
  const teamBudgets = new WeakMap<Team, CompiledBudget[]>();
  const budgetsOfTeam = (team: Team): CompiledBudget[] => {
    let budgets = teamBudgets.get(team);
    if (budgets === undefined) teamBudgets.set(team, (budgets = budgetsOf('team', team.name, budgetOf(team.limits), prefix, limiterFor)));
    return budgets;
  };
  // The levels in LEVELS order: key, team, org (the user's come first, per request).
  const compile = ({ id, org, entry }: Principal, team: Team | undefined): Held => {
    const all = [
      ...budgetsOf('key', id, entry.limits === undefined ? defaults : budgetOf(entry.limits), prefix, limiterFor),
      ...(team === undefined ? [] : budgetsOfTeam(team)),
      ...(org === null ? [] : orgs.get(org) ?? []),
    ];
    const own = perUserOf(entry.limits);
    const shared = own === undefined && team !== undefined ? perUserOf(team.limits) : undefined;
    const owner = own !== undefined ? `key/${id}` : `team/${team?.name}`;
    const template = budgetsOf('user', owner, own ?? shared, prefix, limiterFor);
    return { team, policy: all.length === 0 ? null : policyOf(all), ...(template.length > 0 && { perUser: { owner, budgets: template } }) };
  };
  const compiled = new WeakMap<Principal, Held>();
  return (principal, user) => {
    const team = principal.team === null ? undefined : teams.get(principal.team);
    let held = compiled.get(principal);
    if (held === undefined || held.team !== team) compiled.set(principal, (held = compile(principal, team)));
    if (user === undefined || held.perUser === undefined) return held.policy ?? undefined;
    const base = held.policy;
    return policyOf([...forUser(held.perUser, user, prefix), ...(base === null ? [] : [...base.requests, ...base.reserves])]);
  };
}

/** A request budget's consume() answer: admitted unless it went past the budget. */
export const admitted = (result: unknown, budget: CompiledBudget): result is RateLimiterRes =>
  result instanceof RateLimiterRes && result.consumedPoints <= budget.points;

