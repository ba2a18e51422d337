// Affinity by a header the operator names (a session or conversation id):
// consistent hashing with bounded loads. Each endpoint holds points on a hash
// ring (more for a heavier weight); a key goes to the first endpoint clockwise
// from its hash that is available and under its bound: loadFactor times its
// weighted share of the requests in flight. A conversation keeps hitting the
// backend holding its prefix cache, and no backend takes more than its bound.
// Requests without the header are spread by least in-flight.
import type { Member } from './member';
import type { Picker, PickRequest } from './picker';

/** Ring points per unit of weight: enough that four endpoints split keys within a few per cent. */
const POINTS_PER_WEIGHT = 160;

/** FNV-1a, 32 bits: fast, well spread over short strings, and the same in every replica. */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // A final avalanche: consecutive keys (session-1, session-2) land far apart.
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16;
  return h >>> 0;
}

interface Ring { points: Uint32Array; owners: Member[] }

/** Built once per config: points hashed from each endpoint's URL, so every replica builds the same ring. */
export function buildRing(members: readonly Member[]): Ring {
  const entries: Array<[number, Member]> = [];
  for (const m of members) {
    for (let i = 0; i < m.weight * POINTS_PER_WEIGHT; i++) entries.push([fnv1a(`${m.url}#${i}`), m]);
  }
  entries.sort((a, b) => a[0] - b[0]);
  return { points: Uint32Array.from(entries, (e) => e[0]), owners: entries.map((e) => e[1]) };
}

/** Index of the first point at or after `hash`, wrapping to 0. */
function firstAtOrAfter(points: Uint32Array, hash: number): number {
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (points[mid] < hash) lo = mid + 1; else hi = mid;
  }
  return lo === points.length ? 0 : lo;
}

export function affinity(members: readonly Member[], loadFactor: number, spread: Picker): Picker {
  const ring = buildRing(members);
  const totalWeight = members.reduce((sum, m) => sum + m.weight, 0);
  return {
    pick(all, now, exclude, request) {
      const key = request?.key;
      if (key === undefined) return spreadFor(all, now, exclude, request, 'no_key');
      const inflight = all.reduce((sum, m) => sum + m.inflight, 0);
      const n = ring.points.length;
      const start = firstAtOrAfter(ring.points, fnv1a(key));
      for (let i = 0; i < n; i++) {
        const m = ring.owners[(start + i) % n];
        if (!m.availableFor(now, request?.model) || exclude?.has(m)) continue;
        // This request included: an endpoint may hold at most loadFactor times its share, and always one.
        const bound = Math.max(1, Math.ceil(loadFactor * (inflight + 1) * (m.weight / totalWeight)));
        if (m.inflight < bound) {
          request!.reason = 'affinity';
          return m;
        }
      }
      return spreadFor(all, now, exclude, request, 'over_bound');
    },
  };

  /** A request spread by in-flight counts instead, and why. */
  function spreadFor(all: readonly Member[], now: number, exclude: ReadonlySet<Member> | undefined, request: PickRequest | undefined, why: string): Member | undefined {
    const m = spread.pick(all, now, exclude, request);
    if (request !== undefined) request.reason = why;
    return m;
  }
}
