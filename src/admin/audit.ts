// The audit trail of the admin API: one log line per request, at info,
// `admin action`, once its answer has gone: who (the admin key's digest
// prefix, or none when the key was refused), what (the route's action), which
// key id or team, and how it ended. Never a key, a digest of a gateway key, or a body.
//
//   {"msg":"admin action","admin":"3f9a…","action":"keys.revoke","keyId":"ci-bot","outcome":"ok","status":200,"requestId":"…"}
import type { Logger } from 'pino';

export interface Audit {
  requestId: string;
  method: string;
  /** The route's action (keys.create, …); 'unknown' for a path no route serves. */
  action: string;
  admin?: string;
  keyId?: string;
  /** The team a teams.* action concerns. */
  team?: string;
}

/** ok for a 2xx, else the class of refusal. */
export const outcomeOf = (status: number): string =>
  (status < 300 ? 'ok' : status === 401 ? 'unauthorized' : status === 404 ? 'not_found' : status === 409 ? 'conflict' : status < 500 ? 'refused' : 'failed');

export function auditLine(logger: Logger, audit: Audit, status: number): void {
  logger.info({ audit: true, admin: audit.admin ?? null, action: audit.action, method: audit.method, keyId: audit.keyId, team: audit.team, outcome: outcomeOf(status), status, requestId: audit.requestId }, 'admin action');
}
