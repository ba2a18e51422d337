// The fleet's pure parts: picking among endpoints and passive health.
import { Member, recordAttempt, recordRateLimited, type HealthSettings } from '../../src/fleet/member';
import { leastInflight, roundRobin } from '../../src/fleet/picker';
import { affinity } from '../../src/fleet/affinity';

const health: HealthSettings = { consecutiveFailures: 3, baseEjectionMs: 1000, maxEjectionMs: 8000, maxEjectedShare: 0.5, maxRetryAfterMs: 60_000 };
const pool = (n: number, weights: number[] = []) => Array.from({ length: n }, (_, i) => new Member(`http://b${i}`, weights[i] ?? 1, i));

describe('least in-flight, power of two choices', () => {
  it('prefers the less loaded of the two it draws, per unit of weight', () => {
    const [a, b] = pool(2);
    a.inflight = 5;
    const picker = leastInflight(() => 0.99); // draws b first, then a
    expect(picker.pick([a, b], 0)).toBe(b);
    b.inflight = 9;
    expect(leastInflight(() => 0.1).pick([a, b], 0)).toBe(a);
  });

  it('spreads by weight when nothing is in flight', () => {
    const members = pool(2, [3, 1]);
    let seed = 1;
    const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const picker = leastInflight(random);
    const counts = [0, 0];
    for (let i = 0; i < 4000; i++) counts[picker.pick(members, 0)!.index]++;
    expect(counts[0] / counts[1]).toBeGreaterThan(1.5);
  });

  it('skips ejected and excluded endpoints, and answers undefined when none is left', () => {
    const [a, b] = pool(2);
    a.ejectedUntil = 10_000;
    expect(leastInflight().pick([a, b], 0)).toBe(b);
    expect(leastInflight().pick([a, b], 0, new Set([b]))).toBeUndefined();
  });
});

describe('round robin', () => {
  it('takes turns, weights as repeats, skipping endpoints out of rotation', () => {
    const members = pool(3, [2, 1, 1]);
    const picker = roundRobin();
    expect(Array.from({ length: 8 }, () => picker.pick(members, 0)!.index)).toEqual([0, 0, 1, 2, 0, 0, 1, 2]);
    members[1].ejectedUntil = 100;
    expect(Array.from({ length: 4 }, () => picker.pick(members, 0)!.index)).toEqual([0, 0, 2, 0]);
  });
});

describe('affinity: consistent hashing with bounded loads', () => {
  /** A request as the picker sees it, with its affinity key. */
  const as = (key: string) => ({ model: 'm', key });
  const sessions = Array.from({ length: 2000 }, (_, i) => `session-${i}`);

  it('sends a key to the same endpoint every time, and splits keys by weight', () => {
    const members = pool(4, [1, 1, 1, 3]);
    const picker = affinity(members, 1.25, leastInflight());
    const counts = [0, 0, 0, 0];
    for (const key of sessions) {
      const first = picker.pick(members, 0, undefined, as(key))!;
      expect(picker.pick(members, 0, undefined, as(key))).toBe(first);
      counts[first.index]++;
    }
    // Weight 3 of 6: about half the keys; each weight-1 endpoint about a sixth.
    expect(counts[3] / sessions.length).toBeGreaterThan(0.4);
    expect(counts[3] / sessions.length).toBeLessThan(0.6);
    for (const c of counts.slice(0, 3)) expect(c / sessions.length).toBeGreaterThan(0.1);
  });

  it('moves only the keys of an endpoint that leaves rotation, and brings them back when it returns', () => {
    const members = pool(4);
    const picker = affinity(members, 1.25, leastInflight());
    const before = sessions.map((k) => picker.pick(members, 0, undefined, as(k))!);
    members[2].ejectedUntil = 10_000;
    const during = sessions.map((k) => picker.pick(members, 0, undefined, as(k))!);
    sessions.forEach((_, i) => {
      if (before[i] !== members[2]) expect(during[i]).toBe(before[i]);
      else expect(during[i]).not.toBe(members[2]);
    });
    members[2].ejectedUntil = 0;
    expect(sessions.map((k) => picker.pick(members, 0, undefined, as(k))!)).toEqual(before);
  });

  it('never lets one endpoint take more than loadFactor times its share, even when every request has the same key', () => {
    const members = pool(4);
    const picker = affinity(members, 1.25, leastInflight());
    for (let i = 0; i < 100; i++) picker.pick(members, 0, undefined, as('one-hot-session'))!.inflight++;
    const most = Math.max(...members.map((m) => m.inflight));
    expect(most).toBeLessThanOrEqual(Math.ceil(1.25 * 100 / 4));
    expect(members.reduce((sum, m) => sum + m.inflight, 0)).toBe(100);
  });

  it('spreads requests without a key by least in-flight, and skips excluded endpoints', () => {
    const members = pool(2);
    members[0].inflight = 4;
    let draw = 0;
    const picker = affinity(members, 1.25, leastInflight(() => [0.1, 0.9][draw++ % 2]));
    expect(picker.pick(members, 0)).toBe(members[1]);
    const home = picker.pick(members, 0, undefined, as('k'))!;
    expect(picker.pick(members, 0, new Set([home]), as('k'))).not.toBe(home);
  });
});

describe('passive health', () => {
  it('ejects after consecutive failures, for longer each time, and lets one trial through when it ends', () => {
    const members = pool(4);
    const [m] = members;
    for (let i = 0; i < 3; i++) recordAttempt(m, 'failure', members, health, 0);
    expect(m.ejectedUntil).toBe(1000);
    expect(m.available(500)).toBe(false);
    expect(m.available(1000)).toBe(true);
    m.trialInFlight = true; // the trial is under way: nobody else goes there
    expect(m.available(1001)).toBe(false);
    recordAttempt(m, 'failure', members, health, 1100); // a failed trial: straight back out, twice as long
    expect(m.ejectedUntil).toBe(1100 + 2000);
    recordAttempt(m, 'ok', members, health, 3200);
    expect({ ejectedUntil: m.ejectedUntil, ejections: m.ejections }).toEqual({ ejectedUntil: 0, ejections: 0 });
  });

  it('resets the count on a success and ignores neutral outcomes', () => {
    const members = pool(2);
    recordAttempt(members[0], 'failure', members, health, 0);
    recordAttempt(members[0], 'failure', members, health, 0);
    recordAttempt(members[0], 'neutral', members, health, 0);
    recordAttempt(members[0], 'ok', members, health, 0);
    recordAttempt(members[0], 'failure', members, health, 0);
    expect(members[0].ejectedUntil).toBe(0);
  });

  it('never ejects more than the allowed share of a pool, but may eject a lone endpoint', () => {
    const members = pool(2);
    for (let i = 0; i < 3; i++) recordAttempt(members[0], 'failure', members, health, 0);
    for (let i = 0; i < 3; i++) recordAttempt(members[1], 'failure', members, health, 0);
    expect([members[0].isEjected(1), members[1].isEjected(1)]).toEqual([true, false]);
    const lone = pool(1);
    for (let i = 0; i < 3; i++) recordAttempt(lone[0], 'failure', lone, health, 0);
    expect(lone[0].isEjected(1)).toBe(true);
  });

  it('takes a rate-limited endpoint out until its Retry-After, capped', () => {
    const members = pool(4);
    recordRateLimited(members[0], 7000, members, health, 0);
    expect(members[0].ejectedUntil).toBe(7000);
    recordRateLimited(members[1], 10 * 60_000, members, health, 0);
    expect(members[1].ejectedUntil).toBe(60_000);
  });
});

describe('retry budget', () => {
  it('allows three retries in flight at once, then at most its share of the requests in flight', async () => {
    const { RetryBudget } = await import('../../src/fleet/retry-budget');
    const budget = new RetryBudget(0.2);
    expect([budget.tryRetry(1), budget.tryRetry(1), budget.tryRetry(1), budget.tryRetry(1)]).toEqual([true, true, true, false]);
    expect(budget.tryRetry(50)).toBe(true); // 20 % of 50 in flight = 10
    budget.release();
    budget.release();
    expect(budget.tryRetry(1)).toBe(true);
  });
});
