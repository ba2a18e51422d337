// A dollar budget's window: a calendar day or month (UTC), which a finance
// team budgets in, or a number of seconds like the other budgets. A calendar
// window is counted under a key of its own (…:dollars:2026-11), so the next
// day or month starts from nothing whenever the first request of it comes,
// and its reset is the calendar's, not the limiter's.
export type DollarWindow = 'day' | 'month' | number;

/** How long the limiter keeps a calendar window's count: past its end, so no count expires early. */
export const CALENDAR_SECONDS = { day: 90_000, month: 32 * 86_400 } as const;

export interface Period {
  /** The key suffix: 2026-11-28 or 2026-11. */
  readonly id: string;
  readonly startsAt: number;
  readonly endsAt: number;
}

function periodAt(kind: 'day' | 'month', now: number): Period {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const mm = String(m + 1).padStart(2, '0');
  if (kind === 'month') return { id: `${y}-${mm}`, startsAt: Date.UTC(y, m, 1), endsAt: Date.UTC(y, m + 1, 1) };
  const day = d.getUTCDate();
  return { id: `${y}-${mm}-${String(day).padStart(2, '0')}`, startsAt: Date.UTC(y, m, day), endsAt: Date.UTC(y, m, day + 1) };
}

const current: { day?: Period; month?: Period } = {};

/** The calendar period `now` falls in; made once per period, not per request. */
export function periodOf(kind: 'day' | 'month', now: number): Period {
  const p = current[kind];
  if (p !== undefined && now >= p.startsAt && now < p.endsAt) return p;
  return (current[kind] = periodAt(kind, now));
}

/** How a window reads in a message: "per day", "per month", "per 3600 seconds". */
export function windowText(window: DollarWindow): string {
  if (window === 'day' || window === 'month') return `per ${window}`;
  return window === 1 ? 'per second' : `per ${window} seconds`;
}
