// Picks the endpoint for an attempt among those available. least_inflight:
// power of two choices, the one with fewer requests in flight per unit of
// weight (a random pair, weighted draw), so load spreads without a global
// scan or a herd. round_robin: the next available one, weights as repeats.
// affinity (affinity.ts): a conversation kept on one endpoint by a header.
// scored (scored-picker.ts): on the model servers' own metrics and prefix locality.
import type { Member } from './member';

export type PickerKind = 'least_inflight' | 'round_robin' | 'affinity' | 'scored';

/** What a picker may know of the request: the model and the messages as sent upstream (none for images). */
export interface PickRequest {
  readonly model: string;
  readonly messages?: readonly unknown[];
  /** The affinity header's value, when the picker is affinity and the client sent one. */
  readonly key?: string;
  /** Why the last pick chose its endpoint (the picker's own word: a trace attribute, sluice.picker.reason). */
  reason?: string;
}

export interface Picker {
  /** An endpoint in rotation for the request's model, not in `exclude`, or undefined when none is. The same `request` object on each attempt of one request. */
  pick(members: readonly Member[], now: number, exclude?: ReadonlySet<Member>, request?: PickRequest): Member | undefined;
}

function weightedDraw(candidates: readonly Member[], total: number, random: () => number): Member {
  let r = random() * total;
  for (const m of candidates) {
    r -= m.weight;
    if (r < 0) return m;
  }
  return candidates[candidates.length - 1];
}

export function leastInflight(random: () => number = Math.random): Picker {
  return {
    pick(members, now, exclude, request) {
      const model = request?.model;
      const candidates = members.filter((m) => m.availableFor(now, model) && !exclude?.has(m));
      if (request !== undefined) request.reason = candidates.length <= 1 ? 'only_candidate' : 'fewer_in_flight';
      if (candidates.length <= 1) return candidates[0];
      const total = candidates.reduce((sum, m) => sum + m.weight, 0);
      const a = weightedDraw(candidates, total, random);
      let b = weightedDraw(candidates, total, random);
      for (let i = 0; i < 3 && b === a; i++) b = weightedDraw(candidates, total, random);
      return a.inflight / a.weight <= b.inflight / b.weight ? a : b;
    },
  };
}

export function roundRobin(): Picker {
  let turn = 0;
  return {
    pick(members, now, exclude, request) {
      const slots = members.flatMap((m) => Array<Member>(m.weight).fill(m));
      for (let i = 0; i < slots.length; i++) {
        const m = slots[(turn + i) % slots.length];
        if (m.availableFor(now, request?.model) && !exclude?.has(m)) {
          turn = (turn + i + 1) % slots.length;
          if (request !== undefined) request.reason = 'next_in_turn';
          return m;
        }
      }
      return undefined;
    },
  };
}
