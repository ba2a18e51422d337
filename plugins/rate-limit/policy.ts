// Which budgets a request must pass: its key's own budgets (or the plugin's
// defaults when its entry has no `limits`) and its org's. Orgs are compiled
// once per config; a key's policy once per principal, at its first request,
// so a key made or changed through the admin API gets its own without a
// reload. `decide` reads the limiter answers for one request.
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { GatewayConfig, Principal } from '../../src';
import { storeKey, type BudgetKind, type Scope } from './keys';
import type { Limiter } from './limiters';
import { budgetSchema, type Budget } from './settings';

export interface CompiledBudget {
  readonly scope: Scope;
  readonly kind: BudgetKind;
  readonly points: number;
  readonly windowSeconds: number;
  readonly key: string;
  readonly limiter: Limiter;
  /** x-ratelimit-limit-* value, made once. */
  readonly limitText: string;
}

export interface Policy {
  readonly requests: readonly CompiledBudget[];
  readonly tokens: readonly CompiledBudget[];
}

export interface Reading {
  budget: CompiledBudget;
  remaining: number;
  msBeforeNext: number;
}

export interface Decision {
  /** The spent budget that refills last (so Retry-After covers every spent one). */
  refused?: Reading;
  /** A limiter failed with no insurance (failMode closed). */
  unavailable: boolean;
  /** The tightest request and token budgets, for the headers. */
  requests?: Reading;
  tokens?: Reading;
  /** Tokens the refusing token budget had left (a reservation larger than that was refused). */
  left?: number;
}

type LimiterFor = (points: number, windowSeconds: number) => Limiter;

function budgetsOf(scope: Scope, id: string, limits: Budget | undefined, prefix: string, limiterFor: LimiterFor): CompiledBudget[] {
  const out: CompiledBudget[] = [];
  if (limits === undefined) return out;
  for (const kind of ['requests', 'tokens'] as const) {
    const points = limits[kind];
    if (points === undefined) continue;
    out.push({ scope, kind, points, windowSeconds: limits.windowSeconds, key: storeKey(prefix, scope, id, kind), limiter: limiterFor(points, limits.windowSeconds), limitText: String(points) });
  }
  return out;
}

/** The plugin's fields of a `limits` block (checked at load by the registry), or undefined when it names no budget. */
function budgetOf(limits: unknown): Budget | undefined {
  if (limits === undefined) return undefined;
  const budget = budgetSchema.parse(limits);
  return budget.requests === undefined && budget.tokens === undefined ? undefined : budget;
}

/** A key's policy; undefined when it has no budget at all (own, default or org): unlimited. */
export type PolicyOf = (principal: Principal) => Policy | undefined;

export function compilePolicies(config: GatewayConfig, defaults: Budget | undefined, prefix: string, limiterFor: LimiterFor): PolicyOf {
  const orgs = new Map<string, CompiledBudget[]>();
  for (const [name, org] of Object.entries(config.orgs)) orgs.set(name, budgetsOf('org', name, budgetOf(org.limits), prefix, limiterFor));
  const compile = ({ id, org, entry }: Principal): Policy | null => {
    const all = [...budgetsOf('key', id, entry.limits === undefined ? defaults : budgetOf(entry.limits), prefix, limiterFor), ...(org === null ? [] : orgs.get(org) ?? [])];
    return all.length === 0 ? null : { requests: all.filter((b) => b.kind === 'requests'), tokens: all.filter((b) => b.kind === 'tokens') };
  };
  const compiled = new WeakMap<Principal, Policy | null>();
  return (principal) => {
    let policy = compiled.get(principal);
    if (policy === undefined) compiled.set(principal, (policy = compile(principal)));
    return policy ?? undefined;
  };
}

/** A request budget's consume() answer: admitted unless it went past the budget. */
export const admitted = (result: unknown, budget: CompiledBudget): result is RateLimiterRes =>
  result instanceof RateLimiterRes && result.consumedPoints <= budget.points;

/** Fewer remaining is tighter; on a tie, the one that refills later. */
const tighter = (remaining: number, ms: number, than: Reading | undefined): boolean =>
  than === undefined || remaining < than.remaining || (remaining === than.remaining && ms > than.msBeforeNext);

// null: nothing counted yet, the whole budget is there.
const consumedOf = (r: RateLimiterRes | null): number => (r === null ? 0 : r.consumedPoints);
const msOf = (r: RateLimiterRes | null): number => (r === null ? 0 : Math.max(r.msBeforeNext, 0));
// Refused past the budget: a request that would be one too many, a reservation that does not fit.
const spent = (b: CompiledBudget, r: RateLimiterRes | null): boolean => r !== null && r.consumedPoints > b.points;
const clamp = (n: number, max: number): number => Math.min(Math.max(n, 0), max);

const budgetAt = (policy: Policy, i: number): CompiledBudget =>
  (i < policy.requests.length ? policy.requests[i] : policy.tokens[i - policy.requests.length]);

/**
 * `results` holds, in order, one consume() answer per request budget (1
 * point) and one per token budget (`reserve` points), each a RateLimiterRes or
 * an Error (settled, never thrown). A refused request gives back each request
 * budget's point that fitted and every reservation (see hooks), so the headers
 * then show the budgets without it; `left` is what the refusing token budget had.
 */
export function decide(policy: Policy, results: readonly unknown[], reserve = 1): Decision {
  const decision: Decision = { unavailable: false };
  const n = policy.requests.length;
  for (let i = 0; i < results.length; i++) {
    const r = results[i];
    if (r !== null && !(r instanceof RateLimiterRes)) decision.unavailable = true;
    else if (spent(budgetAt(policy, i), r) && (decision.refused === undefined || msOf(r) > decision.refused.msBeforeNext)) {
      decision.refused = { budget: budgetAt(policy, i), remaining: 0, msBeforeNext: msOf(r) };
    }
  }
  const givenBack = decision.refused !== undefined || decision.unavailable;
  for (let i = 0; i < results.length; i++) {
    const r = results[i];
    if (r !== null && !(r instanceof RateLimiterRes)) continue;
    const budget = budgetAt(policy, i);
    const back = givenBack && (i >= n || !spent(budget, r)) ? (i < n ? 1 : reserve) : 0;
    const remaining = clamp(budget.points - consumedOf(r) + back, budget.points);
    if (decision.refused?.budget === budget && i >= n) decision.left = remaining;
    const ms = msOf(r);
    if (tighter(remaining, ms, decision[budget.kind])) decision[budget.kind] = { budget, remaining, msBeforeNext: ms };
  }
  return decision;
}
