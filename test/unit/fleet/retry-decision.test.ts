// The retry decision as a table: each row the facts that differ from a first
// attempt that failed with time, attempts and budget to spare, and what it decides.
import { decideRetry, type RetryDecision, type RetryFacts } from '../../../src/fleet/retry-decision';

const base: RetryFacts = {
  reason: 'failed', attempts: 1, maxRetries: 1, elapsedMs: 100, deadlineMs: 60_000, budget: true,
  elsewhere: false, sameInRotation: true, fresh: false, retryAfterMs: undefined, maxRetryAfterWaitMs: 5_000, backoffMs: 80,
};

const stop: RetryDecision = { go: false };
const elsewhere = { go: true, where: 'elsewhere', delayMs: 0, budgeted: true };
const same = (delayMs: number) => ({ go: true, where: 'same', delayMs, budgeted: true });

const rows: Array<[string, Partial<RetryFacts>, RetryDecision | object]> = [
  // Where: another endpoint first, for every reason.
  ['a 5xx, another endpoint in rotation', { elsewhere: true }, elsewhere],
  ['a refusal, another endpoint in rotation', { reason: 'refused', elsewhere: true }, elsewhere],
  ['a silence, another endpoint in rotation', { reason: 'timeout', elsewhere: true }, elsewhere],
  ['a close after the request was taken, another endpoint', { reason: 'closed', elsewhere: true }, elsewhere],
  ['a 429, another endpoint in rotation', { reason: 'rate_limited', retryAfterMs: 30_000, elsewhere: true }, elsewhere],
  // The same endpoint, when it is the only one.
  ['a 5xx, alone: after the backoff', {}, same(80)],
  ['a refusal, alone: after the backoff', { reason: 'refused' }, same(80)],
  ['a 5xx, alone, the model now out there', { sameInRotation: false }, stop],
  ['a 503 with a short Retry-After: waited out', { retryAfterMs: 1_000 }, same(1_000)],
  ['a 503 with a Retry-After shorter than the backoff: the backoff', { retryAfterMs: 10 }, same(80)],
  ['a 503 with a long Retry-After: passed on', { retryAfterMs: 6_000 }, stop],
  ['a 429 with a short Retry-After: waited out though out of rotation', { reason: 'rate_limited', retryAfterMs: 2_000, sameInRotation: false }, same(2_000)],
  ['a 429 with Retry-After 0: at once', { reason: 'rate_limited', retryAfterMs: 0 }, same(0)],
  ['a 429 with a long Retry-After', { reason: 'rate_limited', retryAfterMs: 5_001 }, stop],
  ['a 429 without Retry-After', { reason: 'rate_limited' }, stop],
  ['a silence, alone: it would repeat', { reason: 'timeout' }, stop],
  ['a close after the request was taken, alone: never resent there', { reason: 'closed' }, stop],
  // A dropped pooled connection: free, once.
  ['dropped, alone: a fresh connection, no budget', { reason: 'dropped' }, { go: true, where: 'fresh', delayMs: 0, budgeted: false }],
  ['dropped, another endpoint: there, no budget', { reason: 'dropped', elsewhere: true }, { go: true, where: 'elsewhere', delayMs: 0, budgeted: false }],
  ['dropped with the attempts and budget spent: still free', { reason: 'dropped', attempts: 2, budget: false }, { go: true, where: 'fresh', delayMs: 0, budgeted: false }],
  ['dropped again on the fresh connection: as a close', { reason: 'dropped', fresh: true }, stop],
  ['dropped again on the fresh connection, another endpoint', { reason: 'dropped', fresh: true, elsewhere: true }, elsewhere],
  // Bounds: attempts, budget, deadline.
  ['attempts spent', { attempts: 2, elsewhere: true }, stop],
  ['no retries configured', { maxRetries: 0, elsewhere: true }, stop],
  ['three retries configured, two made', { maxRetries: 3, attempts: 3, elsewhere: true }, elsewhere],
  ['budget spent', { budget: false, elsewhere: true }, stop],
  ['deadline passed', { elapsedMs: 60_000, elsewhere: true }, stop],
  ['deadline passed, even for a dropped connection', { reason: 'dropped', elapsedMs: 60_001 }, stop],
  ['a backoff that would overrun the deadline', { elapsedMs: 59_950 }, stop],
  ['a Retry-After wait that would overrun the deadline', { reason: 'rate_limited', retryAfterMs: 1_000, elapsedMs: 59_500 }, stop],
];

describe('the retry decision', () => {
  it.each(rows)('%s', (_name, facts, expected) => {
    expect(decideRetry({ ...base, ...facts })).toEqual(expected);
  });
});
