// One backend endpoint of an upstream's fleet and its passive health, kept in
// two scopes. The endpoint's own health hears what concerns the connection
// (refused, reset, TLS, silence before the head); each model it serves has
// its own for what the backend answered about that model (a 429, a 5xx, a
// bad, cut or stalled answer), so one model's trouble never takes another
// out of rotation. In each scope: attempts failing in a row, until when it is
// out, and the one trial request that decides whether it is back.
import { shownUrl } from '../config/shown-url';

/** Why a scope is out of rotation: attempts that failed, a 429 asking to wait, or failed active checks. */
export type EjectionCause = 'failures' | 'rate_limited' | 'check';

export class Health {
  failures = 0;
  ejections = 0;
  /** Out of rotation until this time (ms since epoch); 0 when in. */
  ejectedUntil = 0;
  /** A half-open scope's one trial request is under way. */
  trialInFlight = false;
  /** Why it went out of rotation last. */
  cause: EjectionCause = 'failures';

  /** Whether a new request may go here now: in rotation, or half-open with no trial running. */
  available(now: number): boolean {
    if (this.ejectedUntil === 0) return true;
    return now >= this.ejectedUntil && !this.trialInFlight;
  }

  isEjected(now: number): boolean {
    return this.ejectedUntil !== 0 && now < this.ejectedUntil;
  }

  /** Half-open: the ejection has ended and the next attempt is its trial. */
  halfOpen(now: number): boolean {
    return this.ejectedUntil !== 0 && now >= this.ejectedUntil;
  }
}

/** One model's health on one endpoint; `label` is what metrics call the model (a name from the config, or "other"). */
export class ModelHealth extends Health {
  constructor(readonly label: string) {
    super();
  }
}

export class Member extends Health {
  inflight = 0;
  /**
   * By the model name sent upstream, made at a model's first failure (a
   * success touches none), at most MAX_MODELS (see fleet-health.ts).
   */
  readonly models = new Map<string, ModelHealth>();

  /** The URL as metrics, spans and logs show it: credentials in its userinfo or query replaced (src/config/shown-url.ts). */
  readonly shown: string;

  /** `url` is the endpoint as configured, what requests go to. */
  constructor(readonly url: string, readonly weight: number, readonly index: number) {
    super();
    this.shown = shownUrl(url);
  }

  /** Whether a request for `model` may go here now: the endpoint in rotation, and the model on it. */
  availableFor(now: number, model: string | undefined): boolean {
    if (!this.available(now)) return false;
    if (this.models.size === 0 || model === undefined) return true;
    const health = this.models.get(model);
    return health === undefined || health.available(now);
  }
}
