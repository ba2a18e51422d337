// picker: scored. Ranks the endpoints in rotation on what their model servers
// report and on prefix locality:
// 1. Saturated endpoints are set aside: a queue over `queueThreshold`, a KV
//    cache over `kvCacheThreshold`, or a reading older than the staleness
//    bound. If every endpoint is saturated, all stay in. If no endpoint has a
//    fresh reading at all (metrics failing or stale everywhere), the picker
//    falls back to requests in flight alone: the fewest wins, as if
//    least in-flight, with no pull towards a prefix that could pile onto one.
// 2. Each is scored: weights.queue × its queue's place between the shortest
//    (1) and the longest (0), + weights.kvCache × KV headroom, + weights.prefix
//    × the share of the prompt's leading blocks it was sent before. The queue
//    is the engine's plus the requests this gateway sent since that reading's
//    scrape began (a burst between scrapes does not pile onto one endpoint); an
//    endpoint without a fresh reading (kept only when all are saturated)
//    counts its requests in flight instead and has no known headroom. Queues
//    are per unit of weight.
// 3. The best score wins; ties are broken at random.
import type { ScoringConfig } from '../config/fleet-schema';
import type { EngineScraper } from './engine-scraper';
import type { Member } from './member';
import type { Picker, PickRequest } from './picker';
import { promptBlocks, type PrefixIndex } from './prefix-index';

/** Why the picker chose as it did (a metric label). */
export type Decision = 'prefix' | 'load' | 'all_saturated' | 'no_metrics';

export interface ScoredDeps {
  scraper: Pick<EngineScraper, 'states' | 'staleAfterMs'>;
  index: PrefixIndex;
  scoring: ScoringConfig;
  /** Each decision, with the prompt's blocks and how many of them the chosen endpoint held. */
  decided(reason: Decision, blocks: number, matched: number): void;
  random?: () => number;
}

interface Candidate { member: Member; fresh: boolean; queued: number; load: number; headroom: number; matched: number; score: number }

export function scoredPicker(deps: ScoredDeps): Picker {
  const { scraper, index, scoring } = deps;
  const { weights, prefix } = scoring;
  const random = deps.random ?? Math.random;
  // A request's blocks are hashed once, on its first pick; a retry's pick reuses them.
  const hashed = new WeakMap<PickRequest, number[]>();
  const blocksOf = (request: PickRequest | undefined): number[] => {
    if (request?.messages === undefined) return [];
    let blocks = hashed.get(request);
    if (blocks === undefined) hashed.set(request, blocks = promptBlocks(request.model, request.messages, prefix.blockChars, prefix.maxBlocks));
    return blocks;
  };

  return {
    pick(members, now, exclude, request) {
      const inRotation = members.filter((m) => m.availableFor(now, request?.model) && !exclude?.has(m));
      if (inRotation.length === 0) return undefined;
      const blocks = blocksOf(request);
      const all: Candidate[] = inRotation.map((member) => {
        const state = scraper.states[member.index];
        const fresh = state.fresh(now, scraper.staleAfterMs);
        const queued = fresh ? state.waiting + state.sentSince : member.inflight;
        return { member, fresh, queued, load: queued / member.weight, headroom: fresh ? 1 - (state.kvCacheUsage ?? 0) : 0, matched: 0, score: 0 };
      });
      const anyFresh = all.some((c) => c.fresh);
      const open = all.filter((c) => c.fresh && c.queued <= scoring.queueThreshold && 1 - c.headroom <= scoring.kvCacheThreshold);
      const pool = open.length > 0 ? open : all;
      let lo = Infinity;
      let hi = -Infinity;
      for (const c of pool) { lo = Math.min(lo, c.load); hi = Math.max(hi, c.load); }
      let best = -Infinity;
      for (const c of pool) {
        c.matched = blocks.length === 0 ? 0 : index.match(c.member.index, blocks);
        const queue = hi === lo ? 1 : (hi - c.load) / (hi - lo);
        c.score = !anyFresh ? -c.load : weights.queue * queue + weights.kvCache * c.headroom + (blocks.length === 0 ? 0 : weights.prefix * (c.matched / blocks.length));
        best = Math.max(best, c.score);
      }
      const top = pool.filter((c) => c.score >= best - 1e-9);
      const chosen = top[Math.min(top.length - 1, Math.floor(random() * top.length))];
      scraper.states[chosen.member.index].sending();
      if (blocks.length > 0) index.record(chosen.member.index, blocks);
      const reason: Decision = !anyFresh ? 'no_metrics' : open.length === 0 ? 'all_saturated' : chosen.matched > 0 ? 'prefix' : 'load';
      deps.decided(reason, blocks.length, chosen.matched);
      if (request !== undefined) request.reason = reason;
      return chosen.member;
    },
  };
}
