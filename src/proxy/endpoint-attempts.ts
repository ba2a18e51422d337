// An upstream's endpoints at work: one attempt on one endpoint, and the
// fleet's side of it. When an attempt ends, its endpoint's in-flight count
// and health hear of it; when it failed before anything reached the client,
// the fleet gathers the facts, asks the retry decision
// (fleet/retry-decision.ts), and carries the answer out: another endpoint,
// the same one after a wait, or a fresh connection. The fleet's side of an
// attempt is an object, not closures (see Forwarding in pipeline/context.ts).
import { Client, type Dispatcher, type Pool } from 'undici';
import type { Format } from './formats/format';
import type { Context } from '../pipeline/context';
import type { Pipeline } from '../pipeline/pipeline';
import type { AttemptResult, FleetHealth } from '../fleet/fleet-health';
import { ModelHealth, type Member } from '../fleet/member';
import type { FleetMetrics } from '../fleet/metrics';
import type { Picker, PickRequest } from '../fleet/picker';
import type { RetryBudget } from '../fleet/retry-budget';
import { decideRetry, type RetryReason } from '../fleet/retry-decision';
import type { Attempt, CallSettings } from './attempt';
import { UpstreamCall } from './call';
import type { Reply } from './reply';
import { operationName, type AttemptSpan } from '../tracing/attempt-span';

/** An endpoint of the fleet with its connection pool. */
export interface Backend {
  member: Member;
  origin: string;
  /** The origin's host and port (server.address and server.port of its attempts' spans). */
  host: string;
  port: number;
  base: string;
  pool: Pool;
}

/**
 * The endpoints one request has tried on this upstream, its counted attempts
 * here, and what the picker knows of it; after a retry, why and where it went.
 */
export interface Tries {
  tried: Set<Member>;
  count: number;
  request: PickRequest;
  format: Format;
  why?: RetryReason;
  where?: 'elsewhere' | 'same' | 'fresh';
}

export interface FleetParts {
  name: string;
  backends: readonly Backend[];
  health: FleetHealth;
  picker: Picker;
  budget: RetryBudget;
  metrics: FleetMetrics;
  pipeline: Pipeline;
  reply: Reply;
  /** gen_ai.provider.name and sluice.picker of its attempts' spans. */
  provider: string;
  pickerName: string;
  call: CallSettings;
  retry: { attempts: number; backoffMs: number; maxBackoffMs: number; maxRetryAfterWaitMs: number; deadlineMs: number };
  /** The configured upstream headers, names in lower case. */
  headers: Readonly<Record<string, string>>;
  /** The options of the pools' connections, for a connection of its own. */
  connection: Pool.Options;
}

export class Fleet {
  readonly members: readonly Member[];

  constructor(readonly parts: FleetParts) {
    this.members = parts.backends.map((b) => b.member);
  }

  /** The endpoint the picker chooses for this request among those in rotation for its model, not in `tried`. */
  pick(now: number, request: PickRequest, tried?: ReadonlySet<Member>): Backend | undefined {
    const m = this.parts.picker.pick(this.members, now, tried, request);
    return m === undefined ? undefined : this.parts.backends[m.index];
  }

  /** One attempt on one endpoint; `budgeted` when it is a retry taken from the budget. */
  send(ctx: Context, path: string, body: string | Buffer, b: Backend, tries: Tries, fresh: boolean, budgeted: boolean): void {
    const { member } = b;
    const p = this.parts;
    p.health.begin(member, tries.request.model, Date.now());
    member.inflight++;
    tries.tried.add(member);
    if (!fresh) tries.count++; // a dropped idle connection tried again is not a new attempt
    ctx.forwarding.attempts++;
    ctx.forwarding.endpoint = member.shown;
    const span = ctx.trace === undefined ? undefined : this.span(ctx, b, tries);
    const call = new UpstreamCall(ctx, p.call, p.pipeline, p.reply, new FleetAttempt(this, ctx, path, body, b, tries, fresh, budgeted, span), tries.format);
    ctx.forwarding.track(call);
    const f = tries.format;
    const headers = withPassed({ ...p.headers, 'content-type': f.contentType ?? 'application/json', accept: ctx.stream ? 'text/event-stream' : f.accept ?? 'application/json', 'x-request-id': ctx.id }, ctx, f);
    span?.inject(headers);
    (fresh ? this.freshConnection(b) : b.pool).dispatch({ path: b.base + path, method: 'POST', headers, body }, call);
  }

  /** A sampled request's span for this attempt: where it goes, and why there. */
  private span(ctx: Context, b: Backend, tries: Tries): AttemptSpan {
    const p = this.parts;
    const { request, where } = tries;
    return ctx.trace!.attempt({
      operation: operationName(ctx.endpoint), provider: p.provider, model: request.model, upstream: p.name,
      endpoint: b.member.shown, host: b.host, port: b.port, attempt: ctx.forwarding.attempts, picker: p.pickerName,
      // A retry on the same endpoint, or over a fresh connection, was not the picker's choice.
      pickerReason: where === 'same' ? 'same_endpoint' : where === 'fresh' ? 'fresh_connection' : request.reason,
      retryReason: tries.why,
    });
  }

  /** Whether an endpoint this request has not tried is in rotation for its model. */
  othersInRotation(now: number, tries: Tries): boolean {
    for (const m of this.members) if (!tries.tried.has(m) && m.availableFor(now, tries.request.model)) return true;
    return false;
  }

  inFlight(): number {
    let sum = 0;
    for (const m of this.members) sum += m.inflight;
    return sum;
  }

  /** Equal jitter: half the doubled backoff fixed, half random, so retries of many requests spread out. */
  backoff(retries: number): number {
    const { backoffMs, maxBackoffMs } = this.parts.retry;
    const ms = Math.min(backoffMs * 2 ** (retries - 1), maxBackoffMs);
    return ms / 2 + Math.random() * (ms / 2);
  }

  /**
   * A retry after a connection died unanswered goes over a connection of its
   * own: the pool's other idle connections to this backend may be dead too.
   */
  private freshConnection(b: Backend): Dispatcher {
    const client = new Client(b.origin, this.parts.connection);
    setImmediate(() => void client.close()); // closes once its one request is done
    return client;
  }
}

class FleetAttempt implements Attempt {
  constructor(
    private readonly fleet: Fleet,
    private readonly ctx: Context,
    private readonly path: string,
    private readonly body: string | Buffer,
    private readonly backend: Backend,
    private readonly tries: Tries,
    readonly fresh: boolean,
    private readonly budgeted: boolean,
    readonly span: AttemptSpan | undefined,
  ) {}

  done(result: AttemptResult, retryAfterMs?: number): void {
    const { member } = this.backend;
    const p = this.fleet.parts;
    member.inflight--;
    if (this.budgeted) p.budget.release();
    const out = p.health.record(member, this.tries.request.model, result, Date.now(), retryAfterMs);
    if (out !== undefined) p.metrics.ejected(p.name, member.shown, out instanceof ModelHealth ? out.label : '', out.cause);
  }

  retry(why: RetryReason, retryAfterMs?: number): boolean {
    const { fleet, ctx, tries } = this;
    if (ctx.closed) return false;
    const p = fleet.parts;
    const now = Date.now();
    const decision = decideRetry({
      reason: why, attempts: tries.count, maxRetries: p.retry.attempts, elapsedMs: ctx.elapsed(), deadlineMs: p.retry.deadlineMs,
      budget: p.budget.hasRoom(fleet.inFlight()), elsewhere: fleet.othersInRotation(now, tries),
      sameInRotation: this.backend.member.availableFor(now, tries.request.model), fresh: this.fresh,
      retryAfterMs, maxRetryAfterWaitMs: p.retry.maxRetryAfterWaitMs, backoffMs: fleet.backoff(tries.count),
    });
    if (!decision.go) return false;
    const next = decision.where === 'elsewhere' ? fleet.pick(now, tries.request, tries.tried) : this.backend;
    if (next === undefined) return false;
    const { budgeted, delayMs } = decision;
    const fresh = decision.where === 'fresh';
    if (budgeted) p.budget.take();
    p.metrics.retried(p.name, why);
    tries.why = why;
    tries.where = decision.where;
    ctx.trace?.retry(why, decision.where, delayMs);
    if (delayMs === 0) {
      fleet.send(ctx, this.path, this.body, next, tries, fresh, budgeted);
      return true;
    }
    setTimeout(() => {
      if (!ctx.closed && !ctx.forwarding.settled) return fleet.send(ctx, this.path, this.body, next, tries, fresh, budgeted);
      if (budgeted) p.budget.release();
    }, delayMs);
    return true;
  }
}

/** The backend's headers, with the client's own that the format passes on as sent (a native Messages backend's anthropic-version). */
function withPassed(headers: Record<string, string>, ctx: Context, format: Format): Record<string, string> {
  if (format.passHeaders === undefined) return headers;
  const given = ctx.res.req.headers;
  for (const name of format.passHeaders) {
    const value = given[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}
