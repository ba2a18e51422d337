// The spend API's and the usage export's query strings, checked once: every
// problem is a 400 naming the parameter and saying what to send instead.
import { GatewayError } from '../contract/errors';

export interface SpendQuery {
  key?: string;
  team?: string;
  org?: string;
  /** An end user's id (docs/teams.md#end-users). */
  user?: string;
  /** YYYY-MM-DD, UTC, both included. */
  from: string;
  to: string;
}

export interface UsageQuery {
  /** Only the records of this team. */
  team?: string;
  /** Only the records of this end user. */
  user?: string;
  sinceMs: number;
  untilMs: number;
  format: 'jsonl' | 'csv';
}

/** Longest range of days one spend read covers. */
export const MAX_DAYS = 366;
const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const NAME_MAX = 200;

const bad = (param: string, message: string): GatewayError => new GatewayError('invalid_request', message, { param });

const today = (now: number): string => new Date(now).toISOString().slice(0, 10);

function dateOf(param: string, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  const t = DATE.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== value) throw bad(param, `${param} must be a date as YYYY-MM-DD (UTC), such as ${fallback}.`);
  return value;
}

function nameOf(param: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length === 0 || value.length > NAME_MAX) throw bad(param, `${param} must be a ${param === 'key' || param === 'user' ? `${param} id` : `${param} name`} of 1 to ${NAME_MAX} characters.`);
  return value;
}

export function spendQuery(query: Readonly<Record<string, string>>, now = Date.now()): SpendQuery {
  const to = dateOf('to', query.to, today(now));
  const from = dateOf('from', query.from, to);
  if (from > to) throw bad('from', `from (${from}) is after to (${to}); give from <= to.`);
  if ((Date.parse(to) - Date.parse(from)) / DAY_MS >= MAX_DAYS) throw bad('from', `from to to spans more than ${MAX_DAYS} days; ask for a shorter range.`);
  return { key: nameOf('key', query.key), team: nameOf('team', query.team), org: nameOf('org', query.org), user: nameOf('user', query.user), from, to };
}

/** An ISO 8601 time ("2026-03-01T12:00:00Z"), a date (its start, UTC) or milliseconds since the epoch. */
function timeOf(param: string, value: string): number {
  const t = /^\d{13}$/.test(value) ? Number(value) : DATE.test(value) ? Date.parse(`${value}T00:00:00Z`) : /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(t)) throw bad(param, `${param} must be a time: ISO 8601 (2026-03-01T12:00:00Z), a date (2026-03-01, its start in UTC) or milliseconds since the epoch.`);
  return t;
}

export function usageQuery(query: Readonly<Record<string, string>>, now = Date.now()): UsageQuery {
  if (query.since === undefined) throw bad('since', 'since is required: the time the export starts at, such as 2026-03-01 or 2026-03-01T12:00:00Z.');
  const sinceMs = timeOf('since', query.since);
  const untilMs = query.until === undefined ? now + 1 : timeOf('until', query.until);
  if (untilMs <= sinceMs) throw bad('until', 'until must be after since.');
  const format = query.format ?? 'jsonl';
  if (format !== 'jsonl' && format !== 'csv') throw bad('format', 'format must be jsonl or csv.');
  return { team: nameOf('team', query.team), user: nameOf('user', query.user), sinceMs, untilMs, format };
}
