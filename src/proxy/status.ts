// Maps what went wrong talking to a backend onto the error catalogue. Pure
// functions: a socket error code, or a backend's status and body, in; a
// GatewayError out, with `details.kind` for metrics (connect|timeout|status|stream).
import { GatewayError } from '../errors';

export const upstreamTimeout = (upstream: string): GatewayError =>
  new GatewayError('upstream_timeout', `The backend "${upstream}" did not answer in time. Try again later.`, { details: { kind: 'timeout', upstream } });

export function fromSocketError(err: NodeJS.ErrnoException, timedOut: boolean, upstream: string, midStream: boolean): GatewayError {
  if (timedOut) return upstreamTimeout(upstream);
  const kind = midStream ? 'stream' : 'connect';
  const what = midStream ? 'broke off the response' : err.code === 'ECONNREFUSED' ? 'refused the connection' : 'could not be reached';
  return new GatewayError('upstream_error', `The backend "${upstream}" ${what}. Try again later.`, { details: { kind, upstream }, cause: err });
}

/** A Retry-After worth passing on: delay seconds or an HTTP date, nothing else. */
const retryAfterValue = (value: unknown): string | undefined =>
  typeof value === 'string' && (/^\d{1,7}$/.test(value) || (value.length <= 64 && /^[A-Za-z0-9 ,:-]+$/.test(value) && !Number.isNaN(Date.parse(value)))) ? value : undefined;

/**
 * A backend's non-2xx answer. Its 4xx passes through (a 429 with its
 * Retry-After, so clients back off as the backend asks); its 401/403 and 5xx
 * are the gateway's problem.
 */
export function fromUpstreamStatus(status: number, bodyText: string, upstream: string, retryAfter?: unknown): GatewayError {
  const details = { kind: 'status', upstream };
  if (status === 401 || status === 403) {
    return new GatewayError('upstream_error', `The backend "${upstream}" refused the gateway's credentials (HTTP ${status}). Tell the gateway operator.`, { details });
  }
  if (status >= 400 && status < 500) {
    const { message, param } = readBackendError(bodyText);
    const after = status === 429 ? retryAfterValue(retryAfter) : undefined;
    return new GatewayError('upstream_rejected', message ?? `The backend rejected the request (HTTP ${status}).`, { status, param, details, headers: after === undefined ? undefined : { 'retry-after': after } });
  }
  return new GatewayError('upstream_error', `The backend "${upstream}" failed (HTTP ${status}). Try again later.`, { details });
}

export const badAnswer = (upstream: string, what: string, midStream = false): GatewayError =>
  new GatewayError('upstream_error', `The backend "${upstream}" sent an answer the gateway cannot use: ${what}.`, { details: { kind: midStream ? 'stream' : 'status', upstream } });

function readBackendError(text: string): { message?: string; param?: string } {
  try {
    const body = JSON.parse(text) as Record<string, any>;
    const err = typeof body.error === 'object' && body.error !== null ? body.error : body;
    const message = typeof err.message === 'string' ? err.message : typeof body.detail === 'string' ? body.detail : undefined;
    return { message: message?.slice(0, 1000), param: typeof err.param === 'string' ? err.param : undefined };
  } catch {
    const trimmed = text.trim().slice(0, 300);
    return { message: trimmed === '' ? undefined : trimmed };
  }
}
