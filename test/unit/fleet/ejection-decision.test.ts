// How long an ejection lasts, and where a request goes when no endpoint is in
// rotation for its model, as tables: each row the facts and the decision.
import { decideOutOfRotation, ejectionMs, type OutOfRotation, type Standing } from '../../../src/fleet/ejection-decision';

describe('the length of an ejection', () => {
  it.each([
    ['the first', 0, 5_000, 30_000, 5_000],
    ['the second: doubled', 1, 5_000, 30_000, 10_000],
    ['the fourth: bounded', 3, 5_000, 30_000, 30_000],
    ['the hundredth: still bounded', 99, 5_000, 30_000, 30_000],
    ['the 2000th: no overflow to Infinity', 2_000, 5_000, 30_000, 30_000],
    ['a base above the bound: the bound', 0, 60_000, 30_000, 30_000],
  ] as const)('%s', (_name, before, base, max, expected) => {
    expect(ejectionMs(before, base, max)).toBe(expected);
  });
});

const NOW = 100_000;
const out = (back: number, cause: Standing['cause'] = 'failures', load = 0): Standing => ({ back: NOW + back, cause, load });
const panic = (index: number, backInMs: number, cause: Standing['cause'] = 'failures'): OutOfRotation => ({ kind: 'panic', index, cause, backInMs });

const rows: Array<[string, Standing[], OutOfRotation]> = [
  ['a lone endpoint out for failures: tried anyway', [out(4_000)], panic(0, 4_000)],
  ['a lone endpoint out for failed checks: tried anyway', [out(4_000, 'check')], panic(0, 4_000, 'check')],
  ['a lone endpoint whose trial is under way: tried too', [out(0)], panic(0, 0)],
  ['the soonest back is most likely recovered', [out(9_000), out(1_000), out(5_000)], panic(1, 1_000)],
  ['a tie: the one with fewer in flight', [out(1_000, 'failures', 3), out(1_000, 'failures', 1)], panic(1, 1_000)],
  ['a tie on load too: the first', [out(1_000), out(1_000)], panic(0, 1_000)],
  ['a lone endpoint resting on a Retry-After: the wait', [out(2_500, 'rate_limited')], { kind: 'wait', backInMs: 2_500 }],
  ['all resting on a Retry-After: the shortest wait', [out(8_000, 'rate_limited'), out(3_000, 'rate_limited')], { kind: 'wait', backInMs: 3_000 }],
  ['one resting, one failed: the failed one, though back later', [out(1_000, 'rate_limited'), out(20_000)], panic(1, 20_000)],
];

describe('no endpoint in rotation for the model', () => {
  it.each(rows)('%s', (_name, standings, expected) => {
    expect(decideOutOfRotation(standings, NOW)).toEqual(expected);
  });
});
