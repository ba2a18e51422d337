// Where spend records go and are read from: Redis (shared by the replicas),
// the primary's memory (workers without Redis), or this process's memory.
// A store takes a batch at a time: the recorder gathers a turn's records.
import type { SpendTotals, UsageRecord } from './record';

export interface DayTotals extends SpendTotals {
  /** YYYY-MM-DD (UTC). */
  date: string;
}

export interface SpendStore {
  /** Adds the records to the day sums and the usage log; rejects when the store cannot answer. */
  add(records: readonly UsageRecord[]): Promise<void>;
  /** The sums of `scope` ('all', 'key:<id>', 'org:<name>') for each day from `from` to `to`, days with none left out. */
  days(scope: string, days: readonly string[]): Promise<DayTotals[]>;
  /** The usage records appended in [sinceMs, untilMs), oldest first. */
  records(sinceMs: number, untilMs: number): AsyncIterable<UsageRecord>;
}

const DAY_MS = 86_400_000;

/** Every day from `from` to `to` (YYYY-MM-DD, both included). */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** When a day's sums may go: `retentionDays` after the day ends, in seconds since the epoch. */
export const expiresAt = (day: string, retentionDays: number): number => Date.parse(`${day}T00:00:00Z`) / 1000 + (retentionDays + 1) * 86_400;
