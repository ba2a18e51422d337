// The fleet's pure parts: picking among endpoints and passive health.
import { Member } from '../../../src/fleet/member';
import { FleetHealth, MAX_MODELS, NO_HINT_REST_MS, type AttemptResult, type HealthSettings } from '../../../src/fleet/fleet-health';
import { leastInflight, roundRobin } from '../../../src/fleet/picker';
import { affinity } from '../../../src/fleet/affinity';

const health: HealthSettings = { consecutiveFailures: 3, baseEjectionMs: 1000, maxEjectionMs: 8000, maxEjectedShare: 0.5, maxRetryAfterMs: 60_000 };
const pool = (n: number, weights: number[] = []) => Array.from({ length: n }, (_, i) => new Member(`http://b${i}`, weights[i] ?? 1, i));
const label = (model: string) => (model.startsWith('m') ? model : 'other');
/** An endpoint's attempt for model `m` (or `model`), recorded in its pool. */
const recordAttempt = (member: Member, result: AttemptResult, members: Member[], settings: HealthSettings, now: number, model = 'm') =>
  new FleetHealth(members, settings, label).record(member, model, result, now);

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

describe('passive health of an endpoint: what concerns the connection', () => {
  it('ejects after consecutive failures, for longer each time, and lets one trial through when it ends', () => {
    const members = pool(4);
    const [m] = members;
    for (let i = 0; i < 3; i++) recordAttempt(m, 'unreachable', members, health, 0);
    expect(m.ejectedUntil).toBe(1000);
    expect(m.availableFor(500, 'm')).toBe(false);
    expect(m.availableFor(500, 'other-model')).toBe(false); // the endpoint is out for every model
    expect(m.availableFor(1000, 'm')).toBe(true);
    new FleetHealth(members, health, label).begin(m, 'm', 1000); // the trial is under way: nobody else goes there
    expect(m.availableFor(1001, 'm')).toBe(false);
    recordAttempt(m, 'unreachable', members, health, 1100); // a failed trial: straight back out, twice as long
    expect(m.ejectedUntil).toBe(1100 + 2000);
    recordAttempt(m, 'ok', members, health, 3200);
    expect({ ejectedUntil: m.ejectedUntil, ejections: m.ejections }).toEqual({ ejectedUntil: 0, ejections: 0 });
  });

  it('resets the count on a success, or on any answer from the backend, and ignores neutral outcomes', () => {
    const members = pool(2);
    recordAttempt(members[0], 'unreachable', members, health, 0);
    recordAttempt(members[0], 'unreachable', members, health, 0);
    recordAttempt(members[0], 'neutral', members, health, 0);
    recordAttempt(members[0], 'failed', members, health, 0); // a 5xx: the connection works
    recordAttempt(members[0], 'unreachable', members, health, 0);
    recordAttempt(members[0], 'unreachable', members, health, 0);
    expect(members[0].ejectedUntil).toBe(0);
  });

  it('never ejects more than the allowed share of a pool, but may eject a lone endpoint', () => {
    const members = pool(2);
    for (let i = 0; i < 3; i++) recordAttempt(members[0], 'unreachable', members, health, 0);
    for (let i = 0; i < 3; i++) recordAttempt(members[1], 'unreachable', members, health, 0);
    expect([members[0].isEjected(1), members[1].isEjected(1)]).toEqual([true, false]);
    const lone = pool(1);
    for (let i = 0; i < 3; i++) recordAttempt(lone[0], 'unreachable', lone, health, 0);
    expect(lone[0].isEjected(1)).toBe(true);
  });

  it('counts failed active checks against the endpoint and brings it back on a pass, leaving models alone', () => {
    const members = pool(1);
    const fleet = new FleetHealth(members, health, label);
    for (let i = 0; i < 3; i++) fleet.record(members[0], 'm-a', 'failed', 0);
    expect(fleet.checked(members[0], false, 0)).toBeUndefined();
    fleet.checked(members[0], false, 0);
    expect(fleet.checked(members[0], false, 0)).toBe(members[0]);
    expect(members[0].cause).toBe('check');
    fleet.checked(members[0], true, 10);
    expect(members[0].availableFor(10, 'm-b')).toBe(true);
    expect(members[0].availableFor(10, 'm-a')).toBe(false); // a check names no model
  });
});

describe('passive health of a model on an endpoint: what the backend answered about it', () => {
  it('takes only that model out after consecutive 5xx; other models and the endpoint stay in', () => {
    const members = pool(1);
    const fleet = new FleetHealth(members, health, label);
    const [m] = members;
    for (let i = 0; i < 2; i++) expect(fleet.record(m, 'm-a', 'failed', 0)).toBeUndefined();
    const out = fleet.record(m, 'm-a', 'failed', 0);
    expect(out).toBe(m.models.get('m-a'));
    expect(m.models.get('m-a')!.label).toBe('m-a');
    expect([m.availableFor(1, 'm-a'), m.availableFor(1, 'm-b'), m.isEjected(1)]).toEqual([false, true, false]);
    // Half-open at 1000: one trial, whose success brings the model back.
    fleet.begin(m, 'm-a', 1000);
    expect(m.availableFor(1001, 'm-a')).toBe(false);
    fleet.record(m, 'm-a', 'ok', 1002);
    expect(m.availableFor(1003, 'm-a')).toBe(true);
  });

  it('rests a rate-limited model until its Retry-After, capped; without one, a short while', () => {
    const members = pool(4);
    const fleet = new FleetHealth(members, health, label);
    fleet.record(members[0], 'm', 'rate_limited', 0, 7000);
    expect(members[0].models.get('m')!.ejectedUntil).toBe(7000);
    expect(members[0].isEjected(1)).toBe(false);
    fleet.record(members[1], 'm', 'rate_limited', 0, 10 * 60_000);
    expect(members[1].models.get('m')!.ejectedUntil).toBe(60_000);
    fleet.record(members[2], 'x', 'rate_limited', 0);
    expect(members[2].models.get('x')).toMatchObject({ ejectedUntil: NO_HINT_REST_MS, cause: 'rate_limited', label: 'other' });
  });

  it('holds to the ejected share per model: endpoints out for the model either way count', () => {
    const members = pool(2);
    const fleet = new FleetHealth(members, health, label);
    for (let i = 0; i < 3; i++) fleet.record(members[0], 'm', 'unreachable', 0);
    for (let i = 0; i < 3; i++) fleet.record(members[1], 'm', 'failed', 0);
    expect(members[1].availableFor(1, 'm')).toBe(true); // half the pool is already out for m
    for (let i = 0; i < 3; i++) fleet.record(members[1], 'n', 'failed', 0);
    expect(members[1].availableFor(1, 'n')).toBe(true); // endpoint 0 is out for n too
  });

  it('tracks at most MAX_MODELS per endpoint, forgetting the oldest in good health first', () => {
    const members = pool(1);
    const fleet = new FleetHealth(members, health, label);
    const [m] = members;
    for (let i = 0; i < MAX_MODELS; i++) fleet.record(m, `made-up-${i}`, 'failed', 0);
    fleet.record(m, 'made-up-0', 'ok', 0);
    fleet.record(m, 'newcomer', 'failed', 0);
    expect(m.models.size).toBe(MAX_MODELS);
    expect(m.models.has('made-up-0')).toBe(false);
    expect(m.models.has('newcomer')).toBe(true);
    for (let i = 1; i < MAX_MODELS; i++) fleet.record(m, `made-up-${i}`, 'failed', 0); // each at two failures now
    expect(fleet.record(m, 'one-too-many', 'failed', 0)).toBeUndefined();
    expect(m.models.has('one-too-many')).toBe(false);
  });

  it('says where each endpoint for a model stands: when it is back, why it is out, its load', () => {
    const members = pool(2);
    const fleet = new FleetHealth(members, { ...health, maxEjectedShare: 1 }, label);
    fleet.record(members[0], 'm', 'rate_limited', 0, 3000);
    for (let i = 0; i < 3; i++) fleet.record(members[1], 'm', 'unreachable', 0);
    members[1].inflight = 2;
    const at = (now: number) => fleet.standings('m', now).map(({ back, cause }) => ({ back, cause }));
    expect(at(0)).toEqual([{ back: 3000, cause: 'rate_limited' }, { back: 1000, cause: 'failures' }]);
    expect(fleet.standings('m', 0)[1].load).toBe(2);
    expect(at(1500)[1]).toEqual({ back: 1500, cause: 'failures' }); // half-open
    fleet.begin(members[1], 'm', 1500);
    expect(at(1600)[1]).toEqual({ back: 1600, cause: 'failures' }); // its trial under way
    fleet.record(members[1], 'm', 'unreachable', 1700); // failed: out again, for 2 s
    expect(at(1700)).toEqual([{ back: 3000, cause: 'rate_limited' }, { back: 3700, cause: 'failures' }]);
  });

  it('ends an endpoint ejected for failures when a probe is answered: the next request is its trial', () => {
    const members = pool(1);
    const fleet = new FleetHealth(members, health, label);
    const [m] = members;
    for (let i = 0; i < 3; i++) fleet.record(m, 'm', 'unreachable', 0);
    expect(m.available(10)).toBe(false);
    fleet.probed(m, 10);
    expect(m.available(10)).toBe(true);
    fleet.begin(m, 'm', 10);
    expect(m.trialInFlight).toBe(true);
    fleet.record(m, 'm', 'unreachable', 20); // the trial failed: out again, for twice as long
    expect(m.ejectedUntil).toBe(2020);
  });

  it('leaves an endpoint out for failed health checks or a 429 to what ejected it', () => {
    const members = pool(1);
    const fleet = new FleetHealth(members, health, label);
    const [m] = members;
    for (let i = 0; i < 3; i++) fleet.checked(m, false, 0);
    fleet.probed(m, 10);
    expect(m.available(10)).toBe(false);
  });

  it('never ejects for longer than maxEjectionMs, however many ejections came before', () => {
    const members = pool(1);
    const fleet = new FleetHealth(members, health, label);
    const [m] = members;
    const lengths: number[] = [];
    for (let i = 0; i < 3; i++) fleet.record(m, 'm', 'unreachable', 0);
    lengths.push(m.ejectedUntil);
    for (let n = 0, now = m.ejectedUntil; n < 6; n++, now = m.ejectedUntil) {
      fleet.begin(m, 'm', now); // the trial, failing each time
      fleet.record(m, 'm', 'unreachable', now);
      lengths.push(m.ejectedUntil - now);
    }
    expect(lengths).toEqual([1000, 2000, 4000, 8000, 8000, 8000, 8000]);
  });
});

describe('retry budget', () => {
  it('allows three retries in flight at once, then at most its share of the requests in flight', async () => {
    const { RetryBudget } = await import('../../../src/fleet/retry-budget');
    const budget = new RetryBudget(0.2);
    const tryRetry = (inflight: number) => budget.hasRoom(inflight) && (budget.take(), true);
    expect([tryRetry(1), tryRetry(1), tryRetry(1), tryRetry(1)]).toEqual([true, true, true, false]);
    expect(tryRetry(50)).toBe(true); // 20 % of 50 in flight = 10
    budget.release();
    budget.release();
    expect(tryRetry(1)).toBe(true);
  });
});
