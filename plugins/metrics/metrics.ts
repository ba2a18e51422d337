// The gateway's Prometheus metrics: names, help, labels and buckets. They are
// registered once per registry (see recorderFor in recorder.ts): a config
// reload runs the plugin's create() again and must find the same counters.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

// Whole requests span four orders of magnitude: refusals and errors take
// milliseconds, a JSON completion seconds, a long streamed generation minutes.
// Dense below 1 s for the refusals, then roughly doubling up to 10 minutes.
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600];

// Time to the backend's first byte and to the first streamed event is where
// latency objectives live (time to first token: typically 100 ms to a few
// seconds, queueing and long prompts push it further), so the buckets are
// finer between 50 ms and 5 s and stop at 2 minutes.
export const FIRST_BYTE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 20, 30, 60, 120];

/** A counter series the recorder adds to as requests finish, and the counter takes at each scrape. */
export interface CountSum {
  labels: Record<string, string>;
  value: number;
}

/** What the recorder sums between scrapes: each counter's series by their joined label values (cost in whole nano-dollars, exact whatever the number of requests). */
export interface Sums {
  cost: Map<string, CountSum>;
  requests: Map<string, CountSum>;
  tokens: Map<string, CountSum>;
}

/**
 * A counter's collect(): its series set from the sums, each divided by `unit`
 * (prom-client's inc() builds a hash of the labels a call, too dear a request).
 */
function fromSums(sums: ReadonlyMap<string, CountSum>, unit = 1): (this: Counter) => void {
  return function collect(this: Counter): void {
    this.reset();
    for (const { labels, value } of sums.values()) this.inc(labels, value / unit);
  };
}

export interface GatewayMetrics {
  requests: Counter<'endpoint' | 'version' | 'model' | 'status' | 'reason'>;
  duration: Histogram<'endpoint' | 'model' | 'stream'>;
  upstreamTtfb: Histogram<'upstream' | 'model'>;
  firstEvent: Histogram<'model'>;
  tokens: Counter<'type' | 'model' | 'key' | 'team' | 'org' | 'estimated'>;
  cost: Counter<'key' | 'team' | 'org' | 'model'>;
  rateLimited: Counter<'scope' | 'budget'>;
  contentFilterBlocks: Counter<'endpoint'>;
  upstreamErrors: Counter<'upstream' | 'kind'>;
  inflight: Gauge;
  activeStreams: Gauge;
}

export function registerMetrics(registry: Registry, sums: Sums): GatewayMetrics {
  const registers = [registry];
  return {
    requests: new Counter({
      name: 'sluice_requests_total', registers,
      help: 'API requests finished, by endpoint, version, model, HTTP status (499: client closed), error reason (empty on success) and client protocol (chat, responses, messages).',
      labelNames: ['endpoint', 'version', 'model', 'status', 'reason', 'protocol'],
      collect: fromSums(sums.requests),
    }),
    duration: new Histogram({
      name: 'sluice_request_duration_seconds', registers, buckets: DURATION_BUCKETS,
      help: 'Whole API request, from arrival to the last byte sent (or the client leaving).',
      labelNames: ['endpoint', 'model', 'stream', 'protocol'],
    }),
    upstreamTtfb: new Histogram({
      name: 'sluice_upstream_ttfb_seconds', registers, buckets: FIRST_BYTE_BUCKETS,
      help: 'From arrival to the backend\'s response head.',
      labelNames: ['upstream', 'model'],
    }),
    firstEvent: new Histogram({
      name: 'sluice_stream_first_event_seconds', registers, buckets: FIRST_BYTE_BUCKETS,
      help: 'From arrival to the first streamed event written to the client.',
      labelNames: ['model'],
    }),
    tokens: new Counter({
      name: 'sluice_tokens_total', registers,
      help: 'Tokens used by type (prompt, cached: part of prompt, completion, reasoning: part of completion), as reported by the backend or estimated (estimated="true") when it reports none.',
      labelNames: ['type', 'model', 'key', 'team', 'org', 'estimated'],
      collect: fromSums(sums.tokens),
    }),
    // Summed in integer nano-dollars and set at each scrape: adding dollars as floats would drift from the spend records' exact sums.
    cost: new Counter({
      name: 'sluice_cost_dollars_total', registers,
      help: 'What finished requests cost in dollars, from their usage and the config\'s pricing, by key id, team, org and model (requests no price names are not counted).',
      labelNames: ['key', 'team', 'org', 'model'],
      collect: fromSums(sums.cost, 1e9),
    }),
    rateLimited: new Counter({
      name: 'sluice_rate_limited_total', registers,
      help: 'Requests refused by a rate limit, by scope (key, team, org, model, upstream, backend) and budget (requests, tokens, concurrency).',
      labelNames: ['scope', 'budget'],
    }),
    contentFilterBlocks: new Counter({
      name: 'sluice_content_filter_blocks_total', registers,
      help: 'Requests refused by the content filter.',
      labelNames: ['endpoint'],
    }),
    upstreamErrors: new Counter({
      name: 'sluice_upstream_errors_total', registers,
      help: 'Backend failures answered with 502/504, by upstream and kind (connect, timeout, status, stream).',
      labelNames: ['upstream', 'kind'],
    }),
    inflight: new Gauge({ name: 'sluice_inflight_requests', registers, help: 'API requests past the plugin chain (sent to a backend) and not yet finished.' }),
    activeStreams: new Gauge({ name: 'sluice_active_streams', registers, help: 'Event streams open to clients.' }),
  };
}
