// One backend endpoint of an upstream's fleet and its passive health: how
// many requests it has in flight (until a stream ends, not its head), how many
// attempts in a row failed, and until when it is out of rotation. Ejection
// grows with repeated ejections; when it ends, the endpoint is half-open:
// one trial request decides whether it is back.

export interface HealthSettings {
  /** Attempts failing in a row (connect error, reset, timeout, 5xx) that eject an endpoint. */
  consecutiveFailures: number;
  /** The first ejection's length; each further one doubles it, up to maxEjectionMs. */
  baseEjectionMs: number;
  maxEjectionMs: number;
  /** At most this share of a pool is out of rotation at once. */
  maxEjectedShare: number;
  /** The longest a backend's Retry-After on a 429 is honoured. */
  maxRetryAfterMs: number;
}

export class Member {
  inflight = 0;
  failures = 0;
  ejections = 0;
  /** Out of rotation until this time (ms since epoch); 0 when in. */
  ejectedUntil = 0;
  /** A half-open endpoint's one trial request is under way. */
  trialInFlight = false;

  constructor(readonly url: string, readonly weight: number, readonly index: number) {}

  /** Whether a new request may go here now: in rotation, or half-open with no trial running. */
  available(now: number): boolean {
    if (this.ejectedUntil === 0) return true;
    return now >= this.ejectedUntil && !this.trialInFlight;
  }

  isEjected(now: number): boolean {
    return this.ejectedUntil !== 0 && now < this.ejectedUntil;
  }
}

export type AttemptResult = 'ok' | 'failure' | 'neutral';

/** Records how an attempt ended; ejects the endpoint when it keeps failing and the pool can spare it. True when it ejected. */
export function recordAttempt(member: Member, result: AttemptResult, pool: readonly Member[], settings: HealthSettings, now: number): boolean {
  const wasTrial = member.trialInFlight;
  member.trialInFlight = false;
  if (result === 'neutral') return false;
  if (result === 'ok') {
    member.failures = 0;
    if (member.ejectedUntil !== 0) { member.ejectedUntil = 0; member.ejections = 0; }
    return false;
  }
  member.failures++;
  // A failed trial sends a half-open endpoint straight back out, for longer.
  if (wasTrial || member.failures >= settings.consecutiveFailures) return eject(member, pool, settings, now, ejectionMs(member, settings));
  return false;
}

/** A 429: out of rotation until its Retry-After (capped), or one base ejection without one. True when it ejected. */
export function recordRateLimited(member: Member, retryAfterMs: number | undefined, pool: readonly Member[], settings: HealthSettings, now: number): boolean {
  member.trialInFlight = false;
  return eject(member, pool, settings, now, Math.min(retryAfterMs ?? settings.baseEjectionMs, settings.maxRetryAfterMs));
}

const ejectionMs = (m: Member, s: HealthSettings): number => Math.min(s.baseEjectionMs * 2 ** m.ejections, s.maxEjectionMs);

function eject(member: Member, pool: readonly Member[], settings: HealthSettings, now: number, ms: number): boolean {
  const out = pool.filter((m) => m !== member && m.isEjected(now)).length;
  // Never more than the allowed share out at once; a lone endpoint may always be ejected (callers fail fast instead of hammering it).
  if (pool.length > 1 && (out + 1) / pool.length > settings.maxEjectedShare) return false;
  member.ejectedUntil = now + ms;
  member.ejections++;
  member.failures = 0;
  return true;
}
