// What the end of a failed attempt says, for the fleet: which health it
// concerns (the endpoint's, the model's, or neither) and why the request may
// go again. Pure functions of what the dispatch handler saw.
import type { AttemptResult } from '../fleet/fleet-health';
import type { RetryReason } from '../fleet/retry-decision';
import type { Phase } from './status';

export interface AttemptEnd {
  readonly result: AttemptResult;
  /** Why it may be tried again; undefined when it may not (a 4xx, an unknown error). */
  readonly reason?: RetryReason;
}

/**
 * A pooled connection that dies this soon after the request started out on
 * it is the keep-alive race (the backend closed it idle as the request
 * went): the backend could not have read the request. Later, it could have.
 */
export const DROP_WINDOW_MS = 250;

// Errors only a connection attempt raises: name resolution, refusal, routing, TLS, connect timeout.
const CONNECT_ERRORS = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ECONNABORTED|UND_ERR_CONNECT_TIMEOUT|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/;
const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
// A connection that died with no answer on it.
const DIED = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

const RATE_LIMITED: AttemptEnd = { result: 'rate_limited', reason: 'rate_limited' };
const FAILED: AttemptEnd = { result: 'failed', reason: 'failed' };
const REFUSED_BY_BACKEND: AttemptEnd = { result: 'neutral' };
const REFUSED: AttemptEnd = { result: 'unreachable', reason: 'refused' };
const DROPPED: AttemptEnd = { result: 'neutral', reason: 'dropped' };
const CLOSED: AttemptEnd = { result: 'unreachable', reason: 'closed' };
const SILENT: AttemptEnd = { result: 'unreachable', reason: 'timeout' };
const STALLED: AttemptEnd = { result: 'failed', reason: 'timeout' };
const BROKEN: AttemptEnd = { result: 'unreachable' };

export const isConnectError = (code: string | undefined): boolean => code !== undefined && CONNECT_ERRORS.test(code);
export const isTimeoutCode = (code: string | undefined): boolean => code !== undefined && TIMEOUTS.has(code);

/** A backend's non-2xx answer: 5xx and 429 say nothing about the request (another attempt may answer it); other 4xx would only repeat. */
export function statusEnd(status: number): AttemptEnd {
  if (status === 429) return RATE_LIMITED;
  return status >= 500 ? FAILED : REFUSED_BY_BACKEND;
}

/** The backend was silent too long: before the head, the endpoint's silence; after it, the model's stall. */
export const silenceEnd = (answered: boolean): AttemptEnd => (answered ? STALLED : SILENT);

/**
 * A connection that died, or could not be made, before any answer.
 * `sentMs`: how long ago the request started out on the connection
 * (undefined: it never did); `fresh`: the connection was one of its own.
 */
export function socketEnd(code: string | undefined, timedOut: boolean, sentMs: number | undefined, fresh: boolean): AttemptEnd {
  if (timedOut) return SILENT;
  if (isConnectError(code)) return REFUSED;
  if (code === undefined || !DIED.has(code)) return BROKEN;
  // Reset on write, or closed at once, on a pooled connection: the race, not the backend.
  if (!fresh && (code === 'EPIPE' || sentMs === undefined || sentMs <= DROP_WINDOW_MS)) return DROPPED;
  return CLOSED;
}

/** Where a failed call was: streaming to the client, reading the answer, connecting, waiting for a connection, or for the head. */
export function phaseOf(streaming: boolean, answered: boolean, code: string | undefined, onConnection: boolean): Phase {
  if (streaming) return 'stream';
  if (answered) return 'body';
  if (isConnectError(code)) return 'connect';
  return onConnection ? 'head' : 'queue';
}
