// One finished API request as the spend records keep it: who (key id, team,
// org and end user, never key material), what (model, protocol, endpoint, status), how
// much (tokens by kind, cost), when and which request. The same record is
// summed into the per-day totals and appended to the usage log, so the two
// can never disagree. Cost is whole nano-dollars inside (ctx.cost is rounded
// to them), dollars on the wire.
import { isoTime } from '../plumbing/iso-time';
import type { Outcome, RequestContext } from '../contract/plugin';

export interface UsageRecord {
  /** The finish, as an ISO 8601 UTC time. */
  time: string;
  request_id: string;
  key: string | null;
  /** The key's team when the request was admitted (a key moved to another team is charged there from its next request). */
  team: string | null;
  org: string | null;
  /** The end user the request named (RequestContext.user), null when none or its key may not name one. */
  user: string | null;
  model: string | null;
  protocol: string;
  endpoint: string;
  status: number;
  reason: string | null;
  prompt_tokens: number;
  cached_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  /** True when the backend reported no usage and the gateway estimated it. */
  estimated: boolean;
  /** Dollars; null when no price names the model. */
  cost: number | null;
  // An audio request's record also has its unit: seconds of audio (transcriptions, translations) or characters (speech).
  audio_seconds?: number;
  characters?: number;
  // An MCP tool call's record (protocol "mcp", endpoint "tools/call") also has these; a model request's has none.
  /** The configured MCP server. */
  server?: string;
  /** The tool the call named (up to 128 characters; a refused call's is the client's own text), or null when it named none. */
  tool?: string | null;
  /** How the call ended, as sluice_mcp_tool_calls_total's outcome label. */
  outcome?: string;
  /** Arrival to the response's close, in milliseconds. */
  duration_ms?: number;
  /** The request body's bytes, and the response body's bytes the client was sent. */
  bytes_in?: number;
  bytes_out?: number;
}

/** A day's (or a range's) sums for one scope. */
export interface SpendTotals {
  requests: number;
  prompt_tokens: number;
  cached_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  /** MCP tool calls (their records): not in `requests`, which counts the model API's. */
  tool_calls: number;
  /** Whole nano-dollars, so sums are exact. */
  cost_nanodollars: number;
}

export const TOTAL_FIELDS = ['requests', 'prompt_tokens', 'cached_tokens', 'completion_tokens', 'reasoning_tokens', 'tool_calls', 'cost_nanodollars'] as const;

export const zeroTotals = (): SpendTotals => ({ requests: 0, prompt_tokens: 0, cached_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, tool_calls: 0, cost_nanodollars: 0 });

/** A client's model id can be anything it sent: kept to this many characters. */
const MODEL_MAX = 200;

export function usageRecordOf(ctx: RequestContext, outcome: Outcome, now: number): UsageRecord {
  const u = ctx.usage;
  return {
    time: isoTime(now),
    request_id: ctx.id,
    key: ctx.principal?.id ?? null,
    team: ctx.principal?.team ?? null,
    org: ctx.principal?.org ?? null,
    user: ctx.user ?? null,
    model: ctx.model === undefined ? null : ctx.model.slice(0, MODEL_MAX),
    protocol: ctx.protocol,
    endpoint: ctx.endpoint,
    status: outcome.status,
    reason: outcome.reason,
    prompt_tokens: u?.prompt_tokens ?? 0,
    cached_tokens: u?.cached_tokens ?? 0,
    completion_tokens: u?.completion_tokens ?? 0,
    reasoning_tokens: u?.reasoning_tokens ?? 0,
    estimated: u?.estimated ?? false,
    cost: ctx.cost ?? null,
    ...(u?.audio_seconds !== undefined ? { audio_seconds: u.audio_seconds } : {}),
    ...(u?.characters !== undefined ? { characters: u.characters } : {}),
  };
}

export const nanosOf = (dollars: number | null): number => (dollars === null ? 0 : Math.round(dollars * 1e9));

/** The UTC day of a record, YYYY-MM-DD. */
export const dayOf = (record: UsageRecord): string => record.time.slice(0, 10);

/** What a record's sums go under: the whole gateway, its key, its team, its org and its end user. */
export function scopesOf(record: UsageRecord): string[] {
  const scopes = ['all'];
  if (record.key !== null) scopes.push(`key:${record.key}`);
  if (record.team != null) scopes.push(`team:${record.team}`);
  if (record.org !== null) scopes.push(`org:${record.org}`);
  if (record.user != null) scopes.push(`user:${record.user}`);
  return scopes;
}

/** A batch's sums by day and scope (`<day> <scope>`), so a store writes each total once per batch. */
export function sumsOf(records: readonly UsageRecord[]): Map<string, SpendTotals> {
  const sums = new Map<string, SpendTotals>();
  for (const r of records) {
    const day = dayOf(r);
    for (const scope of scopesOf(r)) {
      const at = `${day} ${scope}`;
      let t = sums.get(at);
      if (t === undefined) sums.set(at, (t = zeroTotals()));
      addRecord(t, r);
    }
  }
  return sums;
}

/** Adds one record into `t`. */
export function addRecord(t: SpendTotals, r: UsageRecord): void {
  if (r.protocol === 'mcp') t.tool_calls += 1;
  else t.requests += 1;
  t.prompt_tokens += r.prompt_tokens;
  t.cached_tokens += r.cached_tokens;
  t.completion_tokens += r.completion_tokens;
  t.reasoning_tokens += r.reasoning_tokens;
  t.cost_nanodollars += nanosOf(r.cost);
}

/** Adds `b` into `a`. */
export function addTotals(a: SpendTotals, b: SpendTotals): void {
  for (const f of TOTAL_FIELDS) a[f] += b[f];
}
