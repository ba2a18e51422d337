// The admin API's spend: GET /admin/spend (a key's, a team's, an org's or the
// whole gateway's sums per day and over the range) and GET /admin/usage (the
// usage records of a time range, a team's or an end user's alone with ?team=
// or ?user=, streamed as JSON
// Lines or CSV). Both read
// the spend store in force (src/spend): Redis, or the memory of this process
// (the primary's, with workers).
import { GatewayError } from '../contract/errors';
import { daysBetween, TOTAL_FIELDS, zeroTotals, type DayTotals, type SpendStore, type UsageRecord } from '../spend';
import { exportLines } from '../spend/export';
import { route, type AdminCall, type AdminRoute } from './router';
import { spendQuery, usageQuery } from './spend-query';

export interface SpendRoutesDeps {
  /** The spend store to read; undefined while there is none. */
  spend(): SpendStore | undefined;
}

const unavailable = (cause: unknown): GatewayError =>
  new GatewayError('store_unavailable', 'The spend store cannot answer right now; try again shortly.', { headers: { 'retry-after': '1' }, cause });

function storeOf(deps: SpendRoutesDeps): SpendStore {
  const store = deps.spend();
  if (store === undefined) throw new GatewayError('store_unavailable', 'Spend records are not kept here: the config in force sets spend.record: false.');
  return store;
}

/** A day's or the range's sums as the API answers them: cost in dollars (at most nine decimals). */
function view({ cost_nanodollars, ...counts }: Omit<DayTotals, 'date'> & { date?: string }) {
  return { ...counts, cost: cost_nanodollars / 1e9 };
}

async function section(store: SpendStore, scope: string, days: string[]) {
  let found: DayTotals[];
  try {
    found = await store.days(scope, days);
  } catch (err) {
    throw unavailable(err);
  }
  const total = zeroTotals();
  for (const d of found) for (const f of TOTAL_FIELDS) total[f] += d[f];
  return { days: found.map(view), total: view(total) };
}

async function readSpend(deps: SpendRoutesDeps, call: AdminCall) {
  const q = spendQuery(call.query);
  const store = storeOf(deps);
  if (q.key !== undefined) call.keyId = q.key;
  const days = daysBetween(q.from, q.to);
  const body: Record<string, unknown> = { object: 'spend', from: q.from, to: q.to };
  if (q.key !== undefined) body.key = { id: q.key, ...await section(store, `key:${q.key}`, days) };
  if (q.team !== undefined) body.team = { id: q.team, ...await section(store, `team:${q.team}`, days) };
  if (q.org !== undefined) body.org = { id: q.org, ...await section(store, `org:${q.org}`, days) };
  if (q.user !== undefined) body.user = { id: q.user, ...await section(store, `user:${q.user}`, days) };
  if (q.key === undefined && q.team === undefined && q.org === undefined && q.user === undefined) body.all = await section(store, 'all', days);
  return { body };
}

/** The records, their first read before anything is sent: a store that cannot answer is a 503, not a cut stream. */
async function primed(records: AsyncIterable<UsageRecord>): Promise<AsyncIterable<UsageRecord>> {
  const it = records[Symbol.asyncIterator]();
  let first: IteratorResult<UsageRecord>;
  try {
    first = await it.next();
  } catch (err) {
    throw unavailable(err);
  }
  return (async function* () {
    if (first.done) return;
    yield first.value;
    for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
  })();
}

/** The records of the team and the end user asked for (either may be absent). */
async function* ofWho(records: AsyncIterable<UsageRecord>, team: string | undefined, user: string | undefined): AsyncIterable<UsageRecord> {
  for await (const r of records) if ((team === undefined || r.team === team) && (user === undefined || r.user === user)) yield r;
}

async function exportUsage(deps: SpendRoutesDeps, call: AdminCall) {
  const q = usageQuery(call.query);
  const all = storeOf(deps).records(q.sinceMs, q.untilMs);
  const records = await primed(q.team === undefined && q.user === undefined ? all : ofWho(all, q.team, q.user));
  return { lines: exportLines(records, q.format), contentType: q.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/jsonl; charset=utf-8' };
}

export function spendRoutes(deps: SpendRoutesDeps): AdminRoute[] {
  return [
    route('GET', '/admin/spend', 'spend.read', (call) => readSpend(deps, call)),
    route('GET', '/admin/usage', 'usage.export', (call) => exportUsage(deps, call)),
  ];
}
