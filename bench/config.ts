// The gateway config the benchmark runs: the full default chain (auth,
// content filter with a few dozen terms and patterns, limits, rate limit on
// the memory store with budgets too high to trip, metrics), priced, with
// spend records on the memory store (the default).
import { createHash } from 'node:crypto';
import { join } from 'node:path';

/** Made up for the benchmark run; accepted only by the config below. */
export const BENCH_KEY = 'sk-bench-0123456789abcdef0123456789abcdef';

const TERMS = Array.from({ length: 36 }, (_, i) => `forbidden phrase ${i}`).concat(['credit card dump', 'exploit kit', 'ransom note', 'bioweapon recipe']);
const PATTERNS = Array.from({ length: 10 }, (_, i) => `\\bsecret-${i}-[a-z]{4,}\\b`).concat(['\\b\\d{4}[ -]?\\d{4}[ -]?\\d{4}[ -]?\\d{4}\\b']);

/**
 * `workers`: server.workers (1 runs the gateway in one process); `traces`:
 * telemetry.traces, when traced; `output`: the content filter also checks
 * answers, with the same terms (none of which the backend's answer begins, so
 * nothing is held back: what is measured is the check itself); `spend`
 * false: no spend records (spend.record: false), to measure what they cost;
 * `dollars`: the org also has a dollar budget (hard, like its token budget),
 * too large to trip: every request reserves and settles dollars too;
 * `unpriced`: no pricing and no spend section, the config a tree from before
 * prices existed accepts (the baselines run it, and the gateway beside them);
 * `mcpUrl`: an MCP server at /mcp/tools (and on /mcp), which the key may use whole;
 * `noPlugins`: the core alone (auth, routing, the relay, the access log), no plugin chain.
 */
export function benchConfig(backendPort: number, workers = 1, { traces, output = false, spend = true, dollars = false, unpriced = false, mcpUrl, noPlugins = false }: { traces?: Record<string, unknown>; output?: boolean; spend?: boolean; dollars?: boolean; unpriced?: boolean; mcpUrl?: string; noPlugins?: boolean } = {}): string {
  const digest = createHash('sha256').update(BENCH_KEY).digest('hex');
  return JSON.stringify({
    server: { host: '127.0.0.1', port: 0, workers, metrics: { port: 0 } },
    keys: [{ id: 'bench', sha256: digest, org: 'bench', ...(mcpUrl && { mcp: { servers: ['tools'], tools: ['tools/*'] } }) }],
    ...(mcpUrl && { mcp: { servers: { tools: { url: mcpUrl } } } }),
    // The org's budgets are the rate-limit plugin's fields: without the chain, the org has none.
    orgs: { bench: noPlugins ? {} : { limits: { requests: 1_000_000_000, tokens: 1_000_000_000_000, windowSeconds: 60, ...(dollars && { dollars: 1_000_000, dollarWindow: 'month' }) } } },
    upstreams: { bench: { url: `http://127.0.0.1:${backendPort}/v1`, format: 'openai', maxSockets: 1024 } },
    routes: [{ model: 'bench*', upstream: 'bench' }],
    plugins: noPlugins ? [] : [
      { name: 'content-filter', terms: TERMS, patterns: PATTERNS, contact: 'policy@example.com', ...(output && { output: { terms: TERMS } }) },
      { name: 'limits' },
      { name: 'rate-limit', defaults: { requests: 1_000_000_000, tokens: 1_000_000_000_000, windowSeconds: 60 } },
      { name: 'metrics' },
    ],
    ...(!unpriced && { pricing: [{ model: 'bench*', input: 0.15, cachedInput: 0.075, output: 0.6 }] }),
    ...(!spend && { spend: { record: false } }),
    ...(traces && { telemetry: { traces } }),
  }, null, 2);
}

/**
 * BENCH_BASELINES=<label>=<dir>,…: built trees to measure beside this one,
 * each as its label and its server script.
 */
export const baselineTrees = (): Array<[label: string, serverJs: string]> =>
  (process.env.BENCH_BASELINES ?? '').split(',').filter((e) => e.includes('=')).map((e) => {
    const [label, dir] = e.split('=', 2);
    return [label, join(dir, 'dist', 'src', 'server.js')];
  });
