// Admission: the in-flight limits of every request and the wait queue in
// front of them, one per config. The core holds a request's key, org, model
// and upstream slots as a step of its own, after the validate-stage plugins
// (so bad input spends nothing) and before the admit-stage ones (budgets);
// a fallback to another route takes that route's slots and gives back the
// first's; a plugin holds slots on subjects of its own through the same
// service (env.admission). Every slot a request holds is given back once,
// when it finishes, whatever the outcome.
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/schema';
import type { RequestContext, Services, StoreHealthNotes } from '../contract/plugin';
import type { Route } from '../contract/types';
import type { Held } from './attempt';
import { admissionObserver } from './metrics';
import { AdmissionQueue } from './queue';
import { setConcurrencyHeaders } from './refusals';
import { compileScopes, keyLimitsOf, limitOf, rankOf, routeLimitsOf, type Scopes } from './scopes';
import type { AdmissionService, ConcurrencyLimit, LeaseScope } from '../contract/admission';
import { StoreHealth } from '../redis/store-health';
import type { LeasePools } from './stores';
import type { RequestTrace } from '../tracing/request-trace';
import { isGatewayError } from '../contract/errors';

export const DEFAULT_PREFIX = 'sluice:';

/** What admission keeps of a request: the slots it holds, in one or more groups (the route's may change). */
export class SlotSet {
  readonly groups: Held[] = [];
  constructor(private readonly queue: AdmissionQueue) {}

  has(limit: ConcurrencyLimit): boolean {
    return this.groups.some((g) => g.limits.includes(limit));
  }

  /** Gives back the slots under these limits only (a fallback leaving its first route). */
  releaseSome(limits: readonly ConcurrencyLimit[]): void {
    for (let i = this.groups.length - 1; i >= 0; i--) {
      const rest = this.queue.releaseSome(this.groups[i], limits);
      if (rest === undefined) this.groups.splice(i, 1);
      else this.groups[i] = rest;
    }
  }

  release(): void {
    for (const g of this.groups) this.queue.release(g);
    this.groups.length = 0;
  }
}

/** The core's own view of a request: its context (src/pipeline/context.ts), with the slots it holds and its trace when sampled. */
type Admitted = RequestContext & { slots?: SlotSet; trace?: RequestTrace };

export class Admission implements AdmissionService {
  private readonly scopes: Scopes;
  private readonly queue: AdmissionQueue;
  private readonly prefix: string;

  constructor(config: GatewayConfig, services: Services & { leases: LeasePools }, logger: Logger) {
    this.prefix = config.redis?.prefix ?? DEFAULT_PREFIX;
    this.scopes = compileScopes(config, this.prefix);
    const redis = config.redis;
    const client = redis === undefined ? undefined : services.redis;
    if (redis !== undefined && client === undefined) throw new Error('admission: the config names redis but the gateway made no connection (services.redis)');
    // The leases' health: Redis's, or with several workers and no Redis the primary's.
    const health: StoreHealthNotes | undefined = client !== undefined ? services.storeHealth : services.cluster !== undefined ? new StoreHealth(logger, 'primary', services.metrics) : undefined;
    const { queueTimeoutMs, queueMax, leaseMs } = config.admission;
    this.queue = new AdmissionQueue(services.leases.store(client, redis?.failMode ?? 'open', leaseMs), { timeoutMs: queueTimeoutMs, max: queueMax },
      admissionObserver(services.metrics, health, this.scopes.any));
  }

  /** Whether the config sets any in-flight limit: without one the core's step is left out of the chain. */
  get active(): boolean {
    return this.scopes.any;
  }

  limit(scope: LeaseScope, name: string, limit: number): ConcurrencyLimit {
    return limitOf(this.prefix, scope, name, limit)[0];
  }

  /** The core's step: the request's key, org, model and upstream slots. Undefined when it has none to take. */
  admit(ctx: RequestContext): Promise<boolean> | undefined {
    const own = keyLimitsOf(this.scopes, ctx.principal);
    const limits = [...(own?.limits ?? []), ...routeLimitsOf(this.scopes, ctx.route)];
    return limits.length === 0 ? undefined : this.take(ctx, limits, rankOf(own));
  }

  hold(ctx: RequestContext, limits: readonly ConcurrencyLimit[]): Promise<boolean> {
    return this.take(ctx, limits, rankOf(keyLimitsOf(this.scopes, ctx.principal)));
  }

  /**
   * A fallback to `next`: its model and upstream slots are taken (waiting like
   * any request) before the first route's are given back. Undefined when
   * nothing changes.
   */
  switchRoute(ctx: RequestContext, from: Route | undefined, next: Route): Promise<boolean> | undefined {
    const slots = (ctx as Admitted).slots;
    const before = routeLimitsOf(this.scopes, from);
    const wanted = routeLimitsOf(this.scopes, next).filter((l) => slots === undefined || !slots.has(l));
    const leaving = before.filter((l) => !routeLimitsOf(this.scopes, next).includes(l));
    if (wanted.length === 0) {
      if (leaving.length > 0) slots?.releaseSome(leaving);
      return undefined;
    }
    return this.take(ctx, wanted, rankOf(keyLimitsOf(this.scopes, ctx.principal))).then((held) => {
      if (held && leaving.length > 0) (ctx as Admitted).slots?.releaseSome(leaving);
      return held;
    });
  }

  /** Gives back every slot the request holds; called once, when it finishes. */
  release(ctx: RequestContext): void {
    (ctx as Admitted).slots?.release();
  }

  close(): void {
    this.queue.close();
  }

  private async take(ctx: RequestContext, limits: readonly ConcurrencyLimit[], rank: number): Promise<boolean> {
    const trace = (ctx as Admitted).trace;
    trace?.admissionStart(limits.length);
    let held: Held | undefined;
    try {
      held = await this.queue.admit(limits, rank, ctx.signal);
    } catch (err) {
      trace?.admissionEnd(isGatewayError(err) ? err.reason : 'internal_error');
      throw err;
    }
    trace?.admissionEnd(held === undefined ? 'left' : 'admitted');
    if (held === undefined) return false; // the client left while queued: nothing is sent on
    if (ctx.signal.aborted) { // it finished while this was decided (a fallback's slots): they go back at once
      this.queue.release(held);
      return false;
    }
    const admitted = ctx as Admitted;
    (admitted.slots ??= new SlotSet(this.queue)).groups.push(held);
    setConcurrencyHeaders(ctx, held);
    return true;
  }
}
