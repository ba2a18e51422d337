// Tool-call limits (docs/mcp.md): a key's `mcp.limits` and its org's, each a
// number of calls per window for the tools its glob of "<server>/<tool>"
// names. Every tools/call counts once against each limit whose glob names
// it, in the core's limiters (src/limiters/), as the model budgets count:
// in Redis when the config names it (every replica and worker shares one
// count), else in the primary with several workers, else in this process. A
// key's limits count under its id; an org's under its name, shared by all its
// keys. A call that one limit refuses is given back to every limit, and is
// never sent on.
//
//   keys:
//     - { id: ci-agent, sha256: ..., mcp: { servers: [github], tools: ["github/*"], limits: { "github/*": { requests: 600 }, "github/create_issue": { requests: 5, windowSeconds: 3600 } } } }
import { DEFAULT_PREFIX } from '../admission';
import { compileGlob, type Matcher } from '../auth/glob';
import type { Principal } from '../auth/keys';
import { mcpLimitsSchema, type GatewayConfig } from '../config/schema';
import type { StoreHealthNotes } from '../contract/plugin';
import { decidedInProcess, giveBack, type Limiter } from '../limiters/pools';
import { verdictOf } from './limit-verdict';

export type LimitScope = 'key' | 'org';

export interface ToolLimit {
  readonly scope: LimitScope;
  /** Whether a call of "<server>/<tool>" counts against it. */
  readonly names: Matcher;
  /** Calls per window. */
  readonly points: number;
  /** Its count in the store: <prefix>{key:<id>}:mcp:<glob>, or {org:<name>}; the hash tag is the model budgets' (one Redis Cluster slot a subject). */
  readonly key: string;
  readonly limiter: Limiter;
}

/** The limiter of a limit of `points` calls per `windowSeconds`; equal limits share one. */
export type LimiterFor = (points: number, windowSeconds: number) => Limiter;

/** A scope's limits from its `mcp.limits` (none when it sets none). */
export function compileLimits(scope: LimitScope, id: string, limits: unknown, prefix: string, limiterFor: LimiterFor): ToolLimit[] {
  if (limits === undefined) return [];
  // A config's limits were checked at load, a runtime key's by the admin API: parsed again, they come out the same.
  const parsed = mcpLimitsSchema.safeParse(limits);
  if (!parsed.success) return [];
  return Object.entries(parsed.data).map(([glob, { requests, windowSeconds }]) => ({
    scope,
    names: compileGlob(glob),
    points: requests,
    key: `${prefix}{${scope}:${id}}:mcp:${glob}`,
    limiter: limiterFor(requests, windowSeconds),
  }));
}

/** The limits a call of `server`'s `tool` counts against. */
export function limitsNaming(limits: readonly ToolLimit[], server: string, tool: string): ToolLimit[] {
  const name = `${server}/${tool}`;
  return limits.filter((l) => l.names(name));
}

/** What the limits say of one tool call. */
export type Admit =
  | { verdict: 'admitted'; /** Gives the call's counts back (it was not sent on after all). */ undo(): void }
  | { verdict: 'limited'; retryAfterMs: number }
  | { verdict: 'unavailable' };

const ADMITTED: Admit = { verdict: 'admitted', undo: () => undefined };
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
// Resolves with the answer whether the limiter resolved or rejected (over the limit, or an Error).
const same = (answer: unknown): unknown => answer;

/** Each key's limits (its own and its org's), compiled at its first tool call under this config. */
export class McpLimits {
  private readonly orgs = new Map<string, ToolLimit[]>();
  private readonly compiled = new WeakMap<Principal, readonly ToolLimit[]>();
  private readonly prefix: string;

  /** `health`: with Redis, where each call's limits were decided (an outage is logged once, as for the budgets). */
  constructor(config: Pick<GatewayConfig, 'orgs' | 'redis'>, private readonly limiterFor: LimiterFor, private readonly health?: StoreHealthNotes) {
    this.prefix = config.redis?.prefix ?? DEFAULT_PREFIX;
    for (const [name, org] of Object.entries(config.orgs)) this.orgs.set(name, compileLimits('org', name, org.mcp?.limits, this.prefix, limiterFor));
  }

  of(principal: Principal): readonly ToolLimit[] {
    let limits = this.compiled.get(principal);
    if (limits === undefined) {
      const own = isObject(principal.entry.mcp) ? principal.entry.mcp.limits : undefined;
      const org = principal.org === null ? [] : this.orgs.get(principal.org) ?? [];
      limits = [...compileLimits('key', principal.id, own, this.prefix, this.limiterFor), ...org];
      this.compiled.set(principal, limits);
    }
    return limits;
  }

  /**
   * Counts one call of `server`'s `tool` against every limit of the key that
   * names it, all at once; admitted only when every one has room. A refused
   * call gives back all it took, the limit it went over included: a count is
   * only ever of calls made, so two refusals racing cannot leave a slot
   * taken by neither.
   */
  async admitToolCall(principal: Principal, server: string, tool: string): Promise<Admit> {
    const limits = limitsNaming(this.of(principal), server, tool);
    if (limits.length === 0) return ADMITTED;
    const answers = await Promise.all(limits.map((l) => l.limiter.consume(l.key, 1).then(same, same)));
    const v = verdictOf(limits, answers);
    this.health?.decided(answers.some(decidedInProcess), v.verdict === 'unavailable');
    if (v.verdict === 'admitted') {
      let undone = false;
      return { verdict: 'admitted', undo: () => { if (!undone) { undone = true; limits.forEach((l, i) => giveBack(l.limiter, l.key, answers[i], 1)); } } };
    }
    limits.forEach((l, i) => giveBack(l.limiter, l.key, answers[i], v.counted[i] ? 1 : 0));
    return v.verdict === 'limited' ? { verdict: 'limited', retryAfterMs: v.retryAfterMs } : { verdict: 'unavailable' };
  }
}
