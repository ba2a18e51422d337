// What one attempt at a backend needs to know: its upstream's settings, and
// the fleet's side of it (whether to try again, and how it ended).
import type { AttemptResult } from '../fleet/fleet-health';
import type { RetryReason } from '../fleet/retry-decision';
import type { Format } from './formats/format';
import type { AttemptSpan } from '../tracing/attempt-span';

export interface CallSettings {
  upstream: string;
  format: Format;
  timeoutMs: number;
  /** Silence from slowness, per attempt: until the head, until a stream's first event, between chunks after it. */
  firstByteMs: number;
  firstEventMs: number;
  idleMs: number;
  maxAnswerBytes: number;
  maxEventBytes: number;
  /** How long a client may leave a stream unread (server.clientStallMs). */
  clientStallMs: number;
  /** Silence after which a stream whose protocol has a keep-alive event sends one (server.streamPingMs). */
  streamPingMs: number;
}

/**
 * What the upstream's fleet learns of an attempt. `retry` is asked only while
 * nothing has reached the client; true means another attempt has started and
 * this one is done. `done` is called exactly once, before any `retry`: how
 * the attempt ended, for the endpoint's in-flight count and health.
 */
export interface Attempt {
  /** The attempt goes over a connection of its own (a dropped pooled one tried again). */
  readonly fresh: boolean;
  /** The attempt's span, when the request is sampled. */
  readonly span: AttemptSpan | undefined;
  /** `retryAfterMs`: the backend's Retry-After on a 429 or 503. */
  retry(why: RetryReason, retryAfterMs?: number): boolean;
  done(result: AttemptResult, retryAfterMs?: number): void;
}

