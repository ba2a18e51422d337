// Spend records in memory, when there is no Redis: the day sums in a map
// (days past the retention dropped as new days come), and the usage log in
// a ring of `streamMaxLen` records, the oldest overwritten first. With
// several workers the primary keeps the one store (primary-spend.ts), so
// its sums are exact for the machine.
import { addTotals, sumsOf, zeroTotals, type SpendTotals, type UsageRecord } from './record';
import { expiresAt, type DayTotals, type SpendStore } from './store';

export interface SpendLimits {
  retentionDays: number;
  streamMaxLen: number;
}

export class MemorySpendStore implements SpendStore {
  /** By day, then scope. */
  private readonly sums = new Map<string, Map<string, SpendTotals>>();
  private ring: UsageRecord[] = [];
  /** Where the next record goes once the ring is full. */
  private next = 0;

  constructor(private limits: SpendLimits) {}

  configure(limits: SpendLimits): void {
    if (limits.streamMaxLen !== this.limits.streamMaxLen) {
      this.ring = this.ordered().slice(-limits.streamMaxLen);
      this.next = this.ring.length % limits.streamMaxLen;
    }
    this.limits = limits;
  }

  async add(records: readonly UsageRecord[]): Promise<void> {
    this.addNow(records);
  }

  addNow(records: readonly UsageRecord[], now = Date.now()): void {
    for (const [at, totals] of sumsOf(records)) {
      const [day, scope] = [at.slice(0, 10), at.slice(11)];
      let scopes = this.sums.get(day);
      if (scopes === undefined) {
        this.sums.set(day, (scopes = new Map()));
        this.forgetOld(now);
      }
      let t = scopes.get(scope);
      if (t === undefined) scopes.set(scope, (t = zeroTotals()));
      addTotals(t, totals);
    }
    for (const r of records) {
      if (this.ring.length < this.limits.streamMaxLen) this.ring.push(r);
      else this.ring[this.next] = r;
      this.next = (this.next + 1) % this.limits.streamMaxLen;
    }
  }

  async days(scope: string, days: readonly string[]): Promise<DayTotals[]> {
    return days.flatMap((date) => {
      const t = this.sums.get(date)?.get(scope);
      return t === undefined ? [] : [{ date, ...t }];
    });
  }

  async *records(sinceMs: number, untilMs: number): AsyncIterable<UsageRecord> {
    for (const r of this.ordered()) {
      const t = Date.parse(r.time);
      if (t >= sinceMs && t < untilMs) yield r;
    }
  }

  /** The ring, oldest first (a copy: an export reads it while records keep coming). */
  private ordered(): UsageRecord[] {
    if (this.ring.length < this.limits.streamMaxLen) return this.ring.slice();
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }

  private forgetOld(now: number): void {
    for (const day of this.sums.keys()) if (expiresAt(day, this.limits.retentionDays) * 1000 <= now) this.sums.delete(day);
  }
}
