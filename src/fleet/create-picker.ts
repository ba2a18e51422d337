// The picker an upstream's config names, built once per config load.
import { affinity } from './affinity';
import type { Member } from './member';
import { leastInflight, roundRobin, type Picker } from './picker';

/** `scored` is built by the upstream, which owns what it reads (the engine scraper, the prefix index). */
export function createPicker(members: readonly Member[], config: { picker: string; affinity?: { header: string; loadFactor: number } }, scored: () => Picker): Picker {
  switch (config.picker) {
    case 'round_robin': return roundRobin();
    case 'scored': return scored();
    case 'affinity': return affinity(members, config.affinity!.loadFactor, leastInflight());
    default: return leastInflight();
  }
}
