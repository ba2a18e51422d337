// Spend records in memory, when there is no Redis: the day sums in a map
// (days past the retention dropped as new days come), and the usage log in
// a ring of `streamMaxLen` records, the oldest overwritten first. With
// several workers the primary keeps the one store (primary-spend.ts), so
// its sums are exact for the machine. A record is added as it comes (the
// recorder needs no batch for a store in its own memory): its day found
// without slicing its time while the day stays the same, its key's, team's
// and org's sums by their ids, no scope text made.
import { addRecord, zeroTotals, type SpendTotals, type UsageRecord } from './record';
import { expiresAt, type DayTotals, type SpendStore } from './store';

export interface SpendLimits {
  retentionDays: number;
  streamMaxLen: number;
}

/** One day's sums: the whole gateway's, each key id's, each team's, each org's, each end user's. */
interface Day {
  all: SpendTotals;
  keys: Map<string, SpendTotals>;
  teams: Map<string, SpendTotals>;
  orgs: Map<string, SpendTotals>;
  users: Map<string, SpendTotals>;
}

const newDay = (): Day => ({ all: zeroTotals(), keys: new Map(), teams: new Map(), orgs: new Map(), users: new Map() });

function totalsIn(sums: Map<string, SpendTotals>, id: string): SpendTotals {
  let t = sums.get(id);
  if (t === undefined) sums.set(id, (t = zeroTotals()));
  return t;
}

/** A scope's sums in a day ('all', 'key:<id>', 'team:<name>', 'org:<name>', 'user:<id>'). */
function scopeIn(day: Day, scope: string): SpendTotals | undefined {
  if (scope === 'all') return day.all;
  if (scope.startsWith('key:')) return day.keys.get(scope.slice(4));
  if (scope.startsWith('team:')) return day.teams.get(scope.slice(5));
  if (scope.startsWith('org:')) return day.orgs.get(scope.slice(4));
  if (scope.startsWith('user:')) return day.users.get(scope.slice(5));
  return undefined;
}

export class MemorySpendStore implements SpendStore {
  /** By day (YYYY-MM-DD). */
  private readonly sums = new Map<string, Day>();
  /** The day the last record fell in. */
  private last: { date: string; day: Day } | undefined;
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
    for (const r of records) this.addOne(r, now);
  }

  /** One record into its day's sums and the ring. */
  addOne(r: UsageRecord, now = Date.now()): void {
    const day = this.dayOf(r.time, now);
    addRecord(day.all, r);
    if (r.key !== null) addRecord(totalsIn(day.keys, r.key), r);
    if (r.team != null) addRecord(totalsIn(day.teams, r.team), r);
    if (r.org !== null) addRecord(totalsIn(day.orgs, r.org), r);
    if (r.user != null) addRecord(totalsIn(day.users, r.user), r);
    if (this.ring.length < this.limits.streamMaxLen) this.ring.push(r);
    else this.ring[this.next] = r;
    this.next = (this.next + 1) % this.limits.streamMaxLen;
  }

  async days(scope: string, days: readonly string[]): Promise<DayTotals[]> {
    return days.flatMap((date) => {
      const day = this.sums.get(date);
      const t = day === undefined ? undefined : scopeIn(day, scope);
      return t === undefined ? [] : [{ date, ...t }];
    });
  }

  async *records(sinceMs: number, untilMs: number): AsyncIterable<UsageRecord> {
    for (const r of this.ordered()) {
      const t = Date.parse(r.time);
      if (t >= sinceMs && t < untilMs) yield r;
    }
  }

  /** The sums of the day a record's time falls in (made when it is the first of its day). */
  private dayOf(time: string, now: number): Day {
    const last = this.last;
    if (last !== undefined && time.startsWith(last.date)) return last.day;
    const date = time.slice(0, 10);
    let day = this.sums.get(date);
    if (day === undefined) {
      this.sums.set(date, (day = newDay()));
      this.forgetOld(now);
    }
    this.last = { date, day };
    return day;
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
