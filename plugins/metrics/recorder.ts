// Records one finished request into the metrics. The hot path reuses label
// children: prom-client's labels() builds and validates a label object on
// every call, so each child is made once per label set and kept in a Map
// keyed by the joined values (label values are bounded, so the maps are too).
// The request, token and cost counters go further: a child's inc() still
// builds a hash of its labels a call, so their series are plain sums here
// that each counter takes at a scrape (metrics.ts, fromSums).
import type { Histogram, Registry } from 'prom-client';
import { registerMetrics, type CountSum, type GatewayMetrics, type Sums } from './metrics';
import { BUDGET_VALUES, FILTERED_ENDPOINTS, KIND_VALUES, SCOPE_VALUES } from './labels';

type HistogramChild = Histogram.Internal<string>;

/**
 * A request's token series by type: cached is part of prompt, reasoning part
 * of completion, each made with its first token (a backend that reports
 * neither adds no series of zeros).
 */
interface TokenSeries { series: (type: string) => CountSum; prompt: CountSum; completion: CountSum; cached?: CountSum; reasoning?: CountSum }

/** The token counts one request adds. */
export interface TokenCounts { prompt_tokens: number; completion_tokens: number; cached_tokens?: number; reasoning_tokens?: number }

const SEP = '\u0000';

/** The cached value for `key`, made by `make` the first time. */
function childOf<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let child = cache.get(key);
  if (child === undefined) cache.set(key, (child = make()));
  return child;
}

export class Recorder {
  private readonly durationChildren = new Map<string, HistogramChild>();
  private readonly ttfbChildren = new Map<string, HistogramChild>();
  private readonly firstEventChildren = new Map<string, HistogramChild>();
  private readonly tokenChildren = new Map<string, TokenSeries>();

  constructor(readonly metrics: GatewayMetrics, private readonly sums: Sums) {}

  request(endpoint: string, version: string, model: string, status: number, reason: string, protocol = 'chat'): void {
    const key = endpoint + SEP + version + SEP + model + SEP + status + SEP + reason + SEP + protocol;
    childOf(this.sums.requests, key, () => ({ labels: { endpoint, version, model, status: String(status), reason, protocol }, value: 0 })).value += 1;
  }

  duration(endpoint: string, model: string, stream: boolean, seconds: number, protocol = 'chat'): void {
    const key = endpoint + SEP + model + SEP + (stream ? 't' : 'f') + SEP + protocol;
    childOf(this.durationChildren, key, () => this.metrics.duration.labels(endpoint, model, String(stream), protocol)).observe(seconds);
  }

  upstreamTtfb(upstream: string, model: string, seconds: number): void {
    childOf(this.ttfbChildren, upstream + SEP + model, () => this.metrics.upstreamTtfb.labels(upstream, model)).observe(seconds);
  }

  firstEvent(model: string, seconds: number): void {
    childOf(this.firstEventChildren, model, () => this.metrics.firstEvent.labels(model)).observe(seconds);
  }

  tokens(model: string, key: string, team: string, org: string, estimated: boolean, usage: TokenCounts): void {
    const id = model + SEP + key + SEP + team + SEP + org + SEP + (estimated ? 't' : 'f');
    const t = childOf(this.tokenChildren, id, (): TokenSeries => {
      const series = (type: string): CountSum => childOf(this.sums.tokens, type + SEP + id, () => ({ labels: { type, model, key, team, org, estimated: String(estimated) }, value: 0 }));
      return { series, prompt: series('prompt'), completion: series('completion') };
    });
    t.prompt.value += usage.prompt_tokens;
    t.completion.value += usage.completion_tokens;
    const { cached_tokens: cached = 0, reasoning_tokens: reasoning = 0 } = usage;
    if (cached > 0) (t.cached ??= t.series('cached')).value += cached;
    if (reasoning > 0) (t.reasoning ??= t.series('reasoning')).value += reasoning;
  }

  /** Adds a request's cost (dollars, rounded to the nano-dollar) to its series. */
  cost(model: string, key: string, team: string, org: string, dollars: number): void {
    const id = model + SEP + key + SEP + team + SEP + org;
    childOf(this.sums.cost, id, () => ({ labels: { key, team, org, model }, value: 0 })).value += Math.round(dollars * 1e9);
  }

  /**
   * Refusal and failure series whose label values are known up front start at
   * 0, so a dashboard shows 0 rather than "No data" before the first one.
   * Upstreams come from the config: a reload adds the new ones.
   */
  startAtZero(upstreams: readonly string[]): void {
    for (const scope of SCOPE_VALUES) {
      // A model or an upstream has only an in-flight limit, a resting backend only requests, a team only budgets; a key and an org have every kind.
      const budgets = scope === 'model' || scope === 'upstream' ? ['concurrency'] : scope === 'backend' ? ['requests'] : scope === 'team' ? ['requests', 'tokens'] : BUDGET_VALUES;
      for (const budget of budgets) this.metrics.rateLimited.inc({ scope, budget }, 0);
    }
    for (const endpoint of FILTERED_ENDPOINTS) this.metrics.contentFilterBlocks.inc({ endpoint }, 0);
    for (const upstream of upstreams) for (const kind of KIND_VALUES) this.metrics.upstreamErrors.inc({ upstream, kind }, 0);
  }

  // Refusals and failures are rare next to requests: no child cache needed.
  rateLimited(scope: string, budget: string): void {
    this.metrics.rateLimited.inc({ scope, budget });
  }

  contentFilterBlock(endpoint: string): void {
    this.metrics.contentFilterBlocks.inc({ endpoint });
  }

  upstreamError(upstream: string, kind: string): void {
    this.metrics.upstreamErrors.inc({ upstream, kind });
  }
}

const byRegistry = new WeakMap<Registry, Recorder>();

/** One recorder per registry, so its metrics and label children survive config reloads. */
export function recorderFor(registry: Registry): Recorder {
  let recorder = byRegistry.get(registry);
  if (recorder === undefined) {
    const sums: Sums = { cost: new Map(), requests: new Map(), tokens: new Map() };
    recorder = new Recorder(registerMetrics(registry, sums), sums);
    byRegistry.set(registry, recorder);
  }
  return recorder;
}
