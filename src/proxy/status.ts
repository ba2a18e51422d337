// Maps what went wrong talking to a backend onto the error catalogue. Pure
// functions: a socket error code, or a backend's status and body, in; a
// GatewayError out. The client's message is generic (never an upstream's name
// or address); `details` carry the facts for metrics and the access log:
// kind (connect|timeout|status|stream), the upstream, the phase the attempt
// reached (queue|connect|head|body|stream) and the socket error code.
import { GatewayError } from '../contract/errors';
import type { EjectionCause } from '../fleet/member';
import { retryAfterValue } from './retry-after';

export type Phase = 'queue' | 'connect' | 'head' | 'body' | 'stream';

const LATER = 'Try again later; if it keeps failing, tell the gateway operator and quote the x-request-id header.';

export const upstreamTimeout = (upstream: string, phase: Phase = 'head'): GatewayError =>
  new GatewayError('upstream_timeout', `The model backend did not answer in time. ${LATER}`, { details: { kind: 'timeout', upstream, phase } });

const WHAT: Record<string, string> = {
  ECONNREFUSED: 'refused the connection',
  ENOTFOUND: 'could not be found',
  EAI_AGAIN: 'could not be found',
  ECONNRESET: 'closed the connection',
  EPIPE: 'closed the connection',
};

export function fromSocketError(err: NodeJS.ErrnoException, timedOut: boolean, upstream: string, phase: Phase): GatewayError {
  if (timedOut) return upstreamTimeout(upstream, phase);
  const code = typeof err.code === 'string' ? err.code : 'EUNKNOWN';
  const kind = phase === 'stream' || phase === 'body' ? 'stream' : 'connect';
  const what = kind === 'stream' ? 'broke off the response' : WHAT[code] ?? 'could not be reached';
  return new GatewayError('upstream_error', `The model backend ${what}. ${LATER}`, { details: { kind, upstream, phase, code }, cause: err });
}

/**
 * A backend's non-2xx answer. Its 4xx passes through (a 429 with its
 * Retry-After, so clients back off as the backend asks), but for its 401/403:
 * the gateway's credentials, the gateway's problem (502). A 5xx keeps its
 * class and, where a client acts on it, its status: a 503 stays a 503 (with
 * the backend's Retry-After), a 504 a 504; any other is a 502.
 */
export function fromUpstreamStatus(status: number, bodyText: string, upstream: string, retryAfter?: unknown): GatewayError {
  const details = { kind: 'status', upstream, phase: 'head', code: `HTTP ${status}` };
  if (status === 401 || status === 403) {
    return new GatewayError('upstream_error', `The model backend refused the gateway's credentials (HTTP ${status}). Tell the gateway operator and quote the x-request-id header.`, { details });
  }
  if (status >= 400 && status < 500) {
    const { message, param, code, type } = readBackendError(bodyText);
    const after = status === 429 ? retryAfterValue(retryAfter) : undefined;
    // The backend's own code stays in the details: a route may fail over on it (routes[].failoverOn).
    return new GatewayError('upstream_rejected', message ?? `The backend rejected the request (HTTP ${status}).`, {
      status, param, code, type, details: code === undefined ? details : { ...details, backendCode: code }, headers: after === undefined ? undefined : { 'retry-after': after },
    });
  }
  if (status === 503) {
    const after = retryAfterValue(retryAfter);
    return new GatewayError('upstream_unavailable', `The model backend is unavailable (HTTP 503). ${LATER}`, { details, headers: after === undefined ? undefined : { 'retry-after': after } });
  }
  if (status === 504) return new GatewayError('upstream_timeout', `The model backend timed out (HTTP 504). ${LATER}`, { details });
  return new GatewayError('upstream_error', `The model backend failed (HTTP ${status}). ${LATER}`, { details });
}

/**
 * No endpoint is in rotation for the model. While a backend asked to wait (a
 * 429), that is what the client hears: rate_limited, with what is left of the
 * wait; else upstream_unavailable. Retry-After: when the first one is back.
 */
export function outOfRotation(upstream: string, cause: EjectionCause, backInMs: number): GatewayError {
  const headers = { 'retry-after': String(Math.max(1, Math.ceil(backInMs / 1000))) };
  if (cause === 'rate_limited') {
    return new GatewayError('rate_limited', 'The model backend asked for fewer requests for this model (HTTP 429). Retry after the time in Retry-After.', {
      headers, details: { scope: 'backend', budget: 'requests', kind: 'status', upstream, phase: 'queue', code: 'HTTP 429' },
    });
  }
  const why = cause === 'check' ? 'failed its health checks' : 'failed';
  return new GatewayError('upstream_unavailable', `Every backend for this model is out of rotation because it ${why} recently. Retry after the time in Retry-After.`, {
    headers, details: { kind: 'connect', upstream, phase: 'queue', code: 'ALL_EJECTED' },
  });
}

/** The client left a stream unread for server.clientStallMs: the stream ends (its last event, when the client reads again). */
export const clientStalled = (ms: number): GatewayError =>
  new GatewayError('request_timeout', `The client did not read the stream for ${ms} ms, so the gateway ended it.`);

export const badAnswer = (upstream: string, what: string, midStream = false): GatewayError =>
  new GatewayError('upstream_error', `The model backend sent an answer the gateway cannot use: ${what}. ${LATER}`, { details: { kind: midStream ? 'stream' : 'status', upstream, phase: midStream ? 'stream' : 'body', code: 'bad_answer' } });

/** A backend's error code worth matching on: a short identifier, nothing else. */
const CODE = /^[A-Za-z0-9_.-]{1,64}$/;

function readBackendError(text: string): { message?: string; param?: string; code?: string; type?: string } {
  try {
    const body = JSON.parse(text) as Record<string, any>;
    const err = typeof body.error === 'object' && body.error !== null ? body.error : body;
    const message = typeof err.message === 'string' ? err.message : typeof body.detail === 'string' ? body.detail : undefined;
    const code = typeof err.code === 'string' && CODE.test(err.code) ? err.code : undefined;
    const type = typeof err.type === 'string' && CODE.test(err.type) ? err.type : undefined;
    return { message: message?.slice(0, 1000), param: typeof err.param === 'string' ? err.param : undefined, code, type };
  } catch {
    const trimmed = text.trim().slice(0, 300);
    return { message: trimmed === '' ? undefined : trimmed };
  }
}
