// The count of what output rules did to answers:
//   sluice_output_filtered_total{plugin,kind,action}  matches acted on (kind: the rule's kind, never the text)
import { Counter, type Registry } from 'prom-client';

export type OutputCounter = Counter<'plugin' | 'kind' | 'action'>;

export function outputCounter(registry: Registry): OutputCounter {
  return (registry.getSingleMetric('sluice_output_filtered_total') as OutputCounter | undefined) ?? new Counter({
    name: 'sluice_output_filtered_total', registers: [registry], labelNames: ['plugin', 'kind', 'action'],
    help: 'Matches of output rules in answers, by plugin, rule kind (term, pattern, email, card, ...) and action (block: the answer was cut there; mask: replaced).',
  });
}
