// The spend records from a test: a mixed run of requests (JSON, streamed,
// cut short by the client, refused), and the sums of what the spend API,
// the usage export and the metrics say about it, in whole nano-dollars and
// tokens, so agreement is checked exactly.
import { bearer, call, post, postSse } from './http';
import { admin } from './admin';
import { parseExposition, scrape, series } from './metrics';

export interface Sums {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_nanodollars: number;
}

const nanos = (dollars: unknown): number => (typeof dollars === 'number' ? Math.round(dollars * 1e9) : 0);

export const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'm-1', messages: [{ role: 'user', content }], ...extra });

/** Pricing for every model, so every request that reaches one has a cost. */
export const PRICING = [{ model: '*', input: 1.25, cachedInput: 0.5, output: 3.7 }];

/**
 * The mixed run, each request on a connection of its own (`fresh`: so several workers share it):
 * JSON answers, streams read whole, streams the client closes after two events, a request
 * the content filter refuses (400), one without a key (401). Resolves with how many there were.
 */
export async function mixedRun(url: string, keys: readonly string[], fresh = false): Promise<number> {
  const v1 = `${url}/v1/chat/completions`;
  const statuses: number[] = [];
  for (const [i, key] of keys.entries()) {
    statuses.push((await post(v1, chat(`hello number ${i}`), bearer(key), fresh)).status);
    statuses.push((await postSse(v1, chat(`stream ${i} please`, { stream: true }), bearer(key), undefined, fresh)).status);
    statuses.push((await postSse(v1, chat(`a stream cut short ${i}`, { stream: true }), bearer(key), 2, fresh)).status);
    statuses.push((await post(v1, chat('a forbidden phrase'), bearer(key), fresh)).status);
  }
  statuses.push((await post(v1, chat('no key'), {}, fresh)).status);
  const expected = [...keys.flatMap(() => [200, 200, 200, 400]), 401];
  if (statuses.join() !== expected.join()) throw new Error(`the mixed run answered ${statuses.join()}, not ${expected.join()}`);
  return statuses.length;
}

/** The gateway of a spend test: two keys of two orgs, every model priced, the content filter and metrics in the chain. */
export function spendConfig(backendBase: string, store: 'redis' | 'memory', redis: { url: string; prefix: string }, adminDigest: string, keys: readonly object[]): Record<string, unknown> {
  return {
    ...(store === 'redis' && { redis: { ...redis, commandTimeoutMs: 2000 } }),
    admin: { keys: [adminDigest] },
    keys,
    orgs: { acme: {}, beta: {} },
    upstreams: { b: { url: backendBase, format: 'openai' } },
    routes: [{ model: '*', upstream: 'b', advertise: ['m-1'] }],
    pricing: PRICING,
    plugins: [{ name: 'content-filter', terms: ['forbidden phrase'] }, { name: 'metrics' }],
  };
}

/** GET /admin/spend's sums for the query (no key, no org: the whole gateway's). */
export async function spendSums(adminUrl: string, adminKey: string, query = ''): Promise<Sums> {
  const res = await admin(adminUrl, 'GET', `/admin/spend${query}`, adminKey);
  if (res.status !== 200) throw new Error(`GET /admin/spend${query} answered ${res.status}: ${JSON.stringify(res.body)}`);
  const section = (res.body.key ?? res.body.team ?? res.body.org ?? res.body.user ?? res.body.all) as { total: Record<string, number> };
  const t = section.total;
  return { requests: t.requests, prompt_tokens: t.prompt_tokens, completion_tokens: t.completion_tokens, cost_nanodollars: nanos(t.cost) };
}

/** The usage export's records (JSON Lines, or CSV read back into objects); `since` may carry `&until=…`. */
export async function exported(adminUrl: string, adminKey: string, format: 'jsonl' | 'csv', since = '2000-01-01'): Promise<Array<Record<string, unknown>>> {
  const res = await call('GET', `${adminUrl}/admin/usage?since=${since}&format=${format}`, undefined, bearer(adminKey));
  if (res.status !== 200) throw new Error(`GET /admin/usage answered ${res.status}: ${res.text}`);
  const lines = res.text.split('\n').filter((l) => l !== '');
  if (format === 'jsonl') return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const [header, ...rows] = lines.map((l) => l.split(','));
  return rows.map((cells) => Object.fromEntries(header.map((h, i) => [h, /^\d+(\.\d+)?$/.test(cells[i]) ? Number(cells[i]) : cells[i]])));
}

export function sumsOf(records: ReadonlyArray<Record<string, unknown>>): Sums {
  const sum = (f: string) => records.reduce((n, r) => n + Number(r[f] ?? 0), 0);
  return { requests: records.length, prompt_tokens: sum('prompt_tokens'), completion_tokens: sum('completion_tokens'), cost_nanodollars: records.reduce((n, r) => n + nanos(r.cost === '' ? 0 : r.cost), 0) };
}

/** What the metrics listener counts: tokens (sluice_tokens_total) and cost (sluice_cost_dollars_total) over every series. */
export async function metricSums(metricsUrl: string): Promise<Omit<Sums, 'requests'>> {
  const samples = parseExposition((await scrape(metricsUrl)).text);
  const tokens = series(samples, 'sluice_tokens_total');
  const total = (type: string) => Object.entries(tokens).filter(([k]) => k.includes(`type=${type}`)).reduce((n, [, v]) => n + v, 0);
  const cost = Object.values(series(samples, 'sluice_cost_dollars_total')).reduce((n, v) => n + nanos(v), 0);
  return { prompt_tokens: total('prompt'), completion_tokens: total('completion'), cost_nanodollars: cost };
}
