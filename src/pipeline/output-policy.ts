// What a request's plugins ask of its answer: each plugin's output rules, in
// chain order, gathered once the request hooks have run (the outputRules
// hook), and the counter of what they did.
import type { OutputRules } from '../contract/plugin';
import type { OutputCounter } from './output-metrics';

export interface OutputPolicy {
  readonly rules: ReadonlyArray<{ plugin: string; rules: OutputRules }>;
  readonly counter?: OutputCounter;
}
