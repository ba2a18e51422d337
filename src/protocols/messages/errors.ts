// Errors in Messages' own shape, which Anthropic's SDKs read to choose an
// error class and whether to retry:
//   {"type":"error","error":{"type","message","details":{"error_code"}},"request_id"}
// `details.error_code` carries the gateway's reason (the SDKs expose it as
// `errorCode`); the status picks `error.type`. An unavailable pool answers
// 529 `overloaded_error`, which the SDKs retry with backoff.
import { statusOf } from '../../contract/errors';
import type { ErrorEvent } from './types';

export type MessagesErrorType =
  | 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'request_too_large'
  | 'rate_limit_error' | 'api_error' | 'timeout_error' | 'overloaded_error';

const ERROR_TYPES = new Set<string>([
  'invalid_request_error', 'authentication_error', 'permission_error', 'not_found_error', 'request_too_large',
  'rate_limit_error', 'api_error', 'timeout_error', 'overloaded_error', 'billing_error',
]);

export const OVERLOADED = 529;

/** The status a Messages client gets: the gateway's, except that no backend able to answer is Anthropic's 529. */
export function messagesErrorStatus(status: number, reason: string): number {
  return status === 503 && reason === 'upstream_unavailable' ? OVERLOADED : status;
}

/** Anthropic's error type for a status (after messagesErrorStatus). */
export function messagesErrorType(status: number): MessagesErrorType {
  switch (status) {
    case 401: return 'authentication_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 413: return 'request_too_large';
    case 429: return 'rate_limit_error';
    case 504: return 'timeout_error';
    case OVERLOADED: return 'overloaded_error';
    default: return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export interface ErrorExtras {
  /** The request id, which Anthropic's body carries as `request_id`. */
  requestId?: string;
  /** The input at fault, for invalid_request. */
  param?: string | null;
}

/** The error body for a gateway status and reason; send it with messagesErrorStatus(status, reason) and the error's headers (Retry-After). */
export function messagesErrorBody(status: number, reason: string, message: string, extras: ErrorExtras = {}): string {
  return JSON.stringify(errorObject(messagesErrorType(messagesErrorStatus(status, reason)), reason, message, extras));
}

/** A failure after the stream started, as the stream's fail() receives it: a type, the gateway's reason (or a backend's code), a message. */
export interface StreamFailure { type: string; code: string; message: string }

/**
 * The `error` event that ends a stream after it started. A backend's own
 * Messages error type is kept; otherwise the type follows the reason's status.
 */
export function streamErrorEvent(failure: StreamFailure, requestId?: string): ErrorEvent {
  const type = ERROR_TYPES.has(failure.type) ? failure.type
    : messagesErrorType(messagesErrorStatus(statusOf(failure.code), failure.code));
  return errorObject(type, failure.code, failure.message, { requestId });
}

function errorObject(type: string, code: string, message: string, extras: ErrorExtras): ErrorEvent {
  const details: Record<string, string> = { error_code: code };
  if (typeof extras.param === 'string') details.param = extras.param;
  const body: ErrorEvent = { type: 'error', error: { type, message, details } };
  if (extras.requestId !== undefined) body.request_id = extras.requestId;
  return body;
}
