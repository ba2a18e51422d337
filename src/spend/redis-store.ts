// Spend records in Redis, shared by every replica and worker. Per day and
// scope one hash, `<prefix>spend:<YYYY-MM-DD>:<scope>` (scope: all,
// key:<id>, team:<name>, org:<name>, user:<id>), of integer fields raised with HINCRBY and expiring
// `retentionDays` after the day ends (EXPIREAT); the usage log is one
// stream, `<prefix>usage`, each entry one field `r` holding the record's
// JSON, trimmed with XADD MAXLEN ~. A batch is one pipeline (on a cluster,
// whose keys span slots, the same commands sent at once without one).
import { Cluster } from 'ioredis';
import type { RedisClient } from '../contract/types';
import { sumsOf, TOTAL_FIELDS, type UsageRecord } from './record';
import { expiresAt, type DayTotals, type SpendStore } from './store';
import type { SpendLimits } from './memory-store';

/** Stream entries read per XRANGE while exporting. */
const PAGE = 1000;

type Command = [name: string, ...args: Array<string | number>];

/** The stream id right after `id` (ms-seq): where the next page starts, on any Redis 5 or later (no exclusive ranges needed). */
const nextId = (id: string): string => {
  const [ms, seq] = id.split('-');
  return `${ms}-${BigInt(seq) + 1n}`;
};

/** HGETALL's answer: an object through a pipeline, the flat field-value list through `call`. */
function hashOf(reply: unknown): Record<string, string> {
  if (!Array.isArray(reply)) return reply as Record<string, string>;
  const h: Record<string, string> = {};
  for (let i = 0; i + 1 < reply.length; i += 2) h[reply[i] as string] = reply[i + 1] as string;
  return h;
}

export class RedisSpendStore implements SpendStore {
  constructor(private readonly client: RedisClient, readonly prefix: string, private limits: SpendLimits) {}

  configure(limits: SpendLimits): void {
    this.limits = limits;
  }

  get streamKey(): string { return `${this.prefix}usage`; }
  dayKey(day: string, scope: string): string { return `${this.prefix}spend:${day}:${scope}`; }

  async add(records: readonly UsageRecord[]): Promise<void> {
    const commands: Command[] = [];
    for (const [at, totals] of sumsOf(records)) {
      const day = at.slice(0, 10);
      const key = this.dayKey(day, at.slice(11));
      for (const f of TOTAL_FIELDS) if (totals[f] !== 0) commands.push(['hincrby', key, f, totals[f]]);
      commands.push(['expireat', key, expiresAt(day, this.limits.retentionDays)]);
    }
    for (const r of records) commands.push(['xadd', this.streamKey, 'MAXLEN', '~', this.limits.streamMaxLen, '*', 'r', JSON.stringify(r)]);
    await this.run(commands);
  }

  async days(scope: string, days: readonly string[]): Promise<DayTotals[]> {
    const hashes = await this.run(days.map((day) => ['hgetall', this.dayKey(day, scope)]));
    return days.flatMap((date, i) => {
      const h = hashOf(hashes[i]);
      // A day of tool calls alone has no requests field: HINCRBY writes none for a 0.
      if (h.requests === undefined && h.tool_calls === undefined) return [];
      const t = { date } as DayTotals;
      for (const f of TOTAL_FIELDS) t[f] = Number(h[f] ?? 0);
      return [t];
    });
  }

  async *records(sinceMs: number, untilMs: number): AsyncIterable<UsageRecord> {
    let start = String(sinceMs);
    const end = String(untilMs - 1);
    for (;;) {
      const page = await this.client.xrange(this.streamKey, start, end, 'COUNT', PAGE);
      for (const [, fields] of page) yield JSON.parse(fields[1]) as UsageRecord;
      if (page.length < PAGE) return;
      start = nextId(page[page.length - 1][0]);
    }
  }

  /** The answers in order; rejects with the first command's error. */
  private async run(commands: Command[]): Promise<unknown[]> {
    if (commands.length === 0) return [];
    if (this.client instanceof Cluster) return Promise.all(commands.map(([name, ...args]) => this.client.call(name, ...args)));
    const answers = (await this.client.pipeline(commands).exec()) ?? [];
    return answers.map(([err, value]) => {
      if (err) throw err;
      return value;
    });
  }
}
