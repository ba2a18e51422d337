// An upstream's view of its model servers: with `engineMetrics`, its
// endpoints are scraped in the background and reported on the metrics
// listener; with `picker: scored`, the picker ranks them on those readings and
// on a prefix index of its own. The upstream owns this and stops it on close
// (and so on reload).
import type { EngineMetricsConfig, ScoringConfig } from '../config/fleet-schema';
import { startEngineScraper } from './engine-scraper';
import type { Member } from './member';
import type { Picker } from './picker';
import { PrefixIndex } from './prefix-index';
import { scoredPicker } from './scored-picker';
import type { ScoredMetrics } from './scored-metrics';

export interface EngineRouting {
  /** The scored picker over these endpoints (one per upstream). */
  picker(): Picker;
  stop(): Promise<void>;
}

export function startEngineRouting(upstream: string, members: readonly Member[], config: EngineMetricsConfig, scoring: ScoringConfig, metrics: ScoredMetrics): EngineRouting {
  const scraper = startEngineScraper(members, config, (m, ok) => metrics.scraped(upstream, m.shown, ok));
  metrics.watch(upstream, members, scraper);
  return {
    picker() {
      const index = new PrefixIndex(members.length, scoring.prefix.entriesPerEndpoint);
      metrics.watch(upstream, members, scraper, index);
      return scoredPicker({ scraper, index, scoring, decided: (reason, blocks, matched) => metrics.decided(upstream, reason, blocks, matched) });
    },
    async stop() {
      metrics.unwatch(upstream, scraper);
      await scraper.stop();
    },
  };
}
