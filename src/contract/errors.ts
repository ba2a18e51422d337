// The one error type and the one catalogue of reasons. Every error body the
// gateway writes comes from `errorBody`, so clients see one shape everywhere:
// {"error":{"message","param","reason","status","code","type"}}.
// The core's reasons are listed here; a plugin declares its own (its
// definition's `reasons`), added to the catalogue when it is registered, so
// the core names no plugin's reason.

/** The core's reasons → default HTTP status. Tests assert reasons, never message text. */
export const REASONS = {
  invalid_json: 400,
  invalid_request: 400,
  unauthorized: 401,
  model_not_allowed: 403,
  // An MCP access token whose scopes do not reach the server asked for (docs/mcp.md#identity).
  insufficient_scope: 403,
  // A read-only admin key (admin.readKeys) asked the admin API for a change.
  read_only: 403,
  not_found: 404,
  model_not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  internal_error: 500,
  upstream_error: 502,
  limiter_unavailable: 503,
  upstream_unavailable: 503,
  store_unavailable: 503,
  identity_unavailable: 503,
  shutting_down: 503,
  upstream_timeout: 504,
  // A backend's own 4xx keeps the backend's status; 400 is only the default.
  upstream_rejected: 400,
  // Never sent: the client is gone. Recorded in logs and metrics as status 499.
  client_closed: 499,
} as const;

export type CoreReason = keyof typeof REASONS;
/** A reason of the catalogue: the core's, or one a registered plugin declared. */
export type Reason = CoreReason | (string & {});

const catalogue = new Map<string, number>(Object.entries(REASONS));
const owners = new Map<string, string>();

/**
 * Adds a plugin's reasons to the catalogue. A reason keeps one status: the
 * same name with another status (the core's, or another plugin's) is refused.
 */
export function registerReasons(reasons: Readonly<Record<string, number>>, owner: string): void {
  for (const [reason, status] of Object.entries(reasons)) {
    if (!/^[a-z][a-z0-9_]{1,63}$/.test(reason)) throw new Error(`plugin "${owner}": reason "${reason}" must be lower_snake_case`);
    if (!Number.isInteger(status) || status < 400 || status > 599) throw new Error(`plugin "${owner}": reason "${reason}" needs an HTTP error status (400-599), got ${status}`);
    const known = catalogue.get(reason);
    if (known !== undefined && known !== status) throw new Error(`plugin "${owner}": reason "${reason}" is already in the catalogue with status ${known} (${owners.get(reason) ?? 'the core'})`);
    catalogue.set(reason, status);
    if (!(reason in REASONS)) owners.set(reason, owner);
  }
}

/** Every reason of the catalogue with its status and who declared it (undefined: the core). */
export const catalogueReasons = (): Array<{ reason: string; status: number; owner?: string }> =>
  [...catalogue].map(([reason, status]) => ({ reason, status, owner: owners.get(reason) }));

/** A reason's status; a reason nobody registered is a server error. */
export const statusOf = (reason: Reason): number => catalogue.get(reason) ?? 500;

export interface GatewayErrorOptions {
  param?: string | null;
  /** Overrides the catalogue status (only `upstream_rejected` uses this). */
  status?: number;
  /** Extra response headers, e.g. Retry-After. */
  headers?: Record<string, string>;
  /** Machine-readable facts for plugins (metrics labels); never sent. */
  details?: Record<string, string>;
  /** A backend's own error code and type, passed on in place of the defaults (only `upstream_rejected` uses these). */
  code?: string;
  type?: string;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly reason: Reason;
  readonly status: number;
  readonly param: string | null;
  readonly headers?: Record<string, string>;
  readonly details?: Record<string, string>;
  readonly code: string;
  readonly type?: string;

  constructor(reason: Reason, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.reason = reason;
    this.status = options.status ?? statusOf(reason);
    this.param = options.param ?? null;
    this.headers = options.headers;
    this.details = options.details;
    this.code = options.code ?? reason;
    this.type = options.type;
  }
}

export const isGatewayError = (err: unknown): err is GatewayError => err instanceof GatewayError;

/**
 * OpenAI's error classes by status, so SDKs that read `error.type` classify
 * the gateway's errors as they classify OpenAI's own.
 */
export function errorType(status: number): string {
  switch (status) {
    case 401: return 'authentication_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 429: return 'rate_limit_error';
    default: return status >= 500 ? 'server_error' : 'invalid_request_error';
  }
}

/**
 * The interface's error object, serialised: its four fields, plus `code` and
 * `type` for clients written against OpenAI's errors: the reason and the
 * status's class, or a backend's own code and type when it refused the request.
 */
export function errorBody(err: GatewayError): string {
  return JSON.stringify({
    error: { message: err.message, param: err.param, reason: err.reason, status: err.status, code: err.code, type: err.type ?? errorType(err.status) },
  });
}
