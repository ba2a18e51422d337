// Passive health over a fleet's endpoints, in the two scopes of member.ts:
// how an attempt's outcome moves the endpoint's and the model's health, how
// an active check or a probe moves the endpoint's, which trial an attempt is,
// and, when no endpoint is left for a model, where each one stands.
import { ejectionMs, type Standing } from './ejection-decision';
import { ModelHealth, type EjectionCause, type Health, type Member } from './member';

export interface HealthSettings {
  /** Attempts failing in a row that take a scope out of rotation. */
  consecutiveFailures: number;
  /** The first ejection's length; each further one doubles it, up to maxEjectionMs. */
  baseEjectionMs: number;
  maxEjectionMs: number;
  /** At most this share of a pool is out of rotation at once (for one model: its endpoints out either way). */
  maxEjectedShare: number;
  /** The longest a backend's Retry-After on a 429 is honoured. */
  maxRetryAfterMs: number;
}

/**
 * How an attempt ended, by what it says: `unreachable` concerns the endpoint
 * (refused, reset, TLS, silence before the head); `failed` and `rate_limited`
 * concern the model on that endpoint (a 5xx, a bad, cut or stalled answer; a
 * 429); `neutral` says nothing (the client left, a 4xx, a pooled connection
 * that died idle).
 */
export type AttemptResult = 'ok' | 'neutral' | 'unreachable' | 'failed' | 'rate_limited';

/** Models tracked per endpoint at most: model names a client makes up cannot grow memory. */
export const MAX_MODELS = 64;
/** How long a 429 without Retry-After rests the model on that endpoint: the backend gave no hint, so a short while. */
export const NO_HINT_REST_MS = 1_000;

const recover = (h: Health): void => {
  h.trialInFlight = false;
  h.failures = 0;
  if (h.ejectedUntil !== 0) { h.ejectedUntil = 0; h.ejections = 0; }
};

export class FleetHealth {
  constructor(
    readonly members: readonly Member[],
    private readonly settings: HealthSettings,
    /** The metrics label of a model name sent upstream: bounded by the config. */
    private readonly labelOf: (model: string) => string,
  ) {}

  /** An attempt for `model` starts here: it is the trial of each scope that is half-open. */
  begin(member: Member, model: string, now: number): void {
    if (member.halfOpen(now)) member.trialInFlight = true;
    if (member.models.size === 0) return;
    const health = member.models.get(model);
    if (health?.halfOpen(now)) health.trialInFlight = true;
  }

  /** Records how an attempt for `model` ended; returns the scope it took out of rotation, if it did. */
  record(member: Member, model: string, result: AttemptResult, now: number, retryAfterMs?: number): Health | undefined {
    const health = member.models.size === 0 ? undefined : member.models.get(model);
    switch (result) {
      case 'ok':
        recover(member);
        if (health !== undefined) recover(health);
        return undefined;
      case 'neutral':
        member.trialInFlight = false;
        if (health !== undefined) health.trialInFlight = false;
        return undefined;
      case 'unreachable':
        if (health !== undefined) health.trialInFlight = false;
        return this.fail(member, member, undefined, now, 'failures');
      default: {
        // The backend answered: its connection is fine, and the answer concerns this model.
        recover(member);
        const scope = health ?? this.track(member, model);
        if (scope === undefined) return undefined;
        if (result === 'failed') return this.fail(member, scope, model, now, 'failures');
        scope.trialInFlight = false;
        return this.eject(member, scope, model, now, Math.min(retryAfterMs ?? NO_HINT_REST_MS, this.settings.maxRetryAfterMs), 'rate_limited');
      }
    }
  }

  /** An active check's result: a failure counts against the endpoint; a pass brings an ejected endpoint back (never a model: a check names none). */
  checked(member: Member, ok: boolean, now: number): Health | undefined {
    if (!ok) return this.fail(member, member, undefined, now, 'check');
    if (member.ejectedUntil !== 0) recover(member);
    return undefined;
  }

  /**
   * An endpoint probe (ejection-probe.ts) got an answer: the connection works,
   * so the endpoint's ejection ends now and the next request is its trial.
   */
  probed(member: Member, now: number): void {
    if (member.isEjected(now) && member.cause === 'failures') member.ejectedUntil = now;
  }

  /** No endpoint is in rotation for `model`: when each is back (at least now), why it is out, and its load. */
  standings(model: string, now: number): Standing[] {
    return this.members.map((m) => {
      let back = now;
      let cause: EjectionCause = 'failures';
      if (!m.available(now)) { back = Math.max(now, m.ejectedUntil); cause = m.cause; }
      const health = m.models.get(model);
      if (health !== undefined && !health.available(now) && health.ejectedUntil >= back) {
        back = Math.max(now, health.ejectedUntil);
        cause = health.cause;
      }
      return { back, cause, load: m.inflight / m.weight };
    });
  }

  private fail(member: Member, health: Health, model: string | undefined, now: number, cause: EjectionCause): Health | undefined {
    const wasTrial = health.trialInFlight;
    health.trialInFlight = false;
    health.failures++;
    // A failed trial sends a half-open scope straight back out, for longer.
    if (!wasTrial && health.failures < this.settings.consecutiveFailures) return undefined;
    const s = this.settings;
    return this.eject(member, health, model, now, ejectionMs(health.ejections, s.baseEjectionMs, s.maxEjectionMs), cause);
  }

  private eject(member: Member, health: Health, model: string | undefined, now: number, ms: number, cause: EjectionCause): Health | undefined {
    const pool = this.members;
    // Never more than the allowed share out at once; a lone endpoint may always be taken out (callers are told at once instead of hammering it).
    if (pool.length > 1) {
      let out = 0;
      for (const m of pool) if (m !== member && (m.isEjected(now) || (model !== undefined && m.models.get(model)?.isEjected(now) === true))) out++;
      if ((out + 1) / pool.length > this.settings.maxEjectedShare) return undefined;
    }
    health.ejectedUntil = now + ms;
    health.ejections++;
    health.failures = 0;
    health.cause = cause;
    return health;
  }

  /** The model's health on this endpoint, made now; none when MAX_MODELS are tracked and all of them are in trouble. */
  private track(member: Member, model: string): ModelHealth | undefined {
    const models = member.models;
    if (models.size >= MAX_MODELS) {
      let forgotten = false;
      // The oldest model in good health makes room.
      for (const [name, h] of models) {
        if (h.failures === 0 && h.ejectedUntil === 0 && !h.trialInFlight) { models.delete(name); forgotten = true; break; }
      }
      if (!forgotten) return undefined;
    }
    const health = new ModelHealth(this.labelOf(model));
    models.set(model, health);
    return health;
  }
}
