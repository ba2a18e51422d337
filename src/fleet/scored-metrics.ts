// What the gateway reads of its model servers and how the scored picker
// decides, on the metrics listener: per endpoint the queue, running requests,
// KV-cache use and the age of that reading as Sluice sees them, scrapes by
// result; per upstream the picker's decisions by reason, the prefix blocks it
// looked up and found, and the prefix index's size. Gauges are read at each
// scrape from the fleets watched (a reload replaces them); labels come from
// the config only.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { EngineScraper } from './engine-scraper';
import type { Member } from './member';
import type { PrefixIndex } from './prefix-index';
import type { Decision } from './scored-picker';

export interface ScoredMetrics {
  /** An upstream whose engines are scraped (and, with `index`, picked by score). */
  watch(upstream: string, members: readonly Member[], scraper: EngineScraper, index?: PrefixIndex): void;
  /** The upstream closed: stop reporting it, unless a newer build of it took its place. */
  unwatch(upstream: string, scraper: EngineScraper): void;
  scraped(upstream: string, endpoint: string, ok: boolean): void;
  decided(upstream: string, reason: Decision, blocks: number, matched: number): void;
}

const NONE: ScoredMetrics = { watch: () => undefined, unwatch: () => undefined, scraped: () => undefined, decided: () => undefined };
const DECISIONS: readonly Decision[] = ['prefix', 'load', 'all_saturated', 'no_metrics'];

interface Watched { members: readonly Member[]; scraper: EngineScraper; index?: PrefixIndex }

const byRegistry = new WeakMap<Registry, ScoredMetrics>();

export function scoredMetrics(registry: Registry | undefined): ScoredMetrics {
  if (registry === undefined) return NONE;
  const known = byRegistry.get(registry);
  if (known) return known;
  const fleets = new Map<string, Watched>();
  const perEndpoint = (name: string, help: string, value: (w: Watched, i: number, now: number) => number | undefined) => new Gauge({
    name, help, labelNames: ['upstream', 'endpoint'], registers: [registry],
    collect() {
      this.reset();
      const now = Date.now();
      for (const [upstream, w] of fleets) {
        w.members.forEach((m, i) => {
          const v = value(w, i, now);
          if (v !== undefined) this.set({ upstream, endpoint: m.shown }, v);
        });
      }
    },
  });
  const reading = (w: Watched, i: number) => (w.scraper.states[i].at === 0 ? undefined : w.scraper.states[i]);
  perEndpoint('sluice_engine_queue', 'Requests waiting in the engine\'s queue, as last scraped.', (w, i) => reading(w, i)?.waiting);
  perEndpoint('sluice_engine_running', 'Requests the engine is running, as last scraped.', (w, i) => reading(w, i)?.running);
  perEndpoint('sluice_engine_kv_cache_usage', 'The engine\'s KV-cache use, 0 to 1, as last scraped (absent when the engine does not report it).', (w, i) => reading(w, i)?.kvCacheUsage);
  perEndpoint('sluice_engine_metrics_age_seconds', 'Age of the engine reading the picker uses (absent before the first).', (w, i, now) => {
    const r = reading(w, i);
    return r === undefined ? undefined : (now - r.at) / 1000;
  });
  perEndpoint('sluice_engine_metrics_fresh', 'Whether the engine reading is within the staleness bound (1) or stale, so saturated (0).', (w, i, now) => (w.scraper.states[i].fresh(now, w.scraper.staleAfterMs) ? 1 : 0));
  const perUpstream = (name: string, help: string, value: (index: PrefixIndex) => number) => new Gauge({
    name, help, labelNames: ['upstream'], registers: [registry],
    collect() {
      this.reset();
      for (const [upstream, w] of fleets) if (w.index) this.set({ upstream }, value(w.index));
    },
  });
  perUpstream('sluice_prefix_index_entries', 'Prompt-block hashes the prefix index remembers, over every endpoint.', (x) => x.entries);
  perUpstream('sluice_prefix_index_bytes', 'Estimated memory of the prefix index.', (x) => x.bytes);
  const scrapes = new Counter({ name: 'sluice_engine_scrapes_total', help: 'Scrapes of engine metrics, by result.', labelNames: ['upstream', 'endpoint', 'result'], registers: [registry] });
  const decisions = new Counter({ name: 'sluice_picker_decisions_total', help: 'Endpoints chosen by the scored picker, by reason.', labelNames: ['upstream', 'reason'], registers: [registry] });
  const blocks = new Counter({ name: 'sluice_prefix_blocks_total', help: 'Prompt blocks the scored picker looked up.', labelNames: ['upstream'], registers: [registry] });
  const matched = new Counter({ name: 'sluice_prefix_blocks_matched_total', help: 'Prompt blocks the chosen endpoint had been sent before (hit ratio: matched / looked up).', labelNames: ['upstream'], registers: [registry] });
  const metrics: ScoredMetrics = {
    watch(upstream, members, scraper, index) {
      fleets.set(upstream, { members, scraper, index });
      for (const m of members) for (const result of ['ok', 'failed']) scrapes.inc({ upstream, endpoint: m.shown, result }, 0);
      if (index) {
        for (const reason of DECISIONS) decisions.inc({ upstream, reason }, 0);
        blocks.inc({ upstream }, 0);
        matched.inc({ upstream }, 0);
      }
    },
    unwatch(upstream, scraper) {
      if (fleets.get(upstream)?.scraper === scraper) fleets.delete(upstream);
    },
    scraped: (upstream, endpoint, ok) => scrapes.inc({ upstream, endpoint, result: ok ? 'ok' : 'failed' }),
    decided(upstream, reason, n, hits) {
      decisions.inc({ upstream, reason });
      if (n > 0) { blocks.inc({ upstream }, n); matched.inc({ upstream }, hits); }
    },
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
