// The picker an upstream's config names, built once per config load.
import { affinity } from './affinity';
import type { Member } from './member';
import { leastInflight, roundRobin, type Picker } from './picker';

export function createPicker(members: readonly Member[], config: { picker: string; affinity?: { header: string; loadFactor: number } }): Picker {
  switch (config.picker) {
    case 'round_robin': return roundRobin();
    case 'affinity': return affinity(members, config.affinity!.loadFactor, leastInflight());
    default: return leastInflight();
  }
}
