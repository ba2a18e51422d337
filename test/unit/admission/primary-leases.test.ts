// The primary's record of the workers' in-flight leases (server.workers above
// 1, no Redis): a limit holds across workers, a worker's exit frees what it
// held, and a worker refused on a limit is woken when a slot there frees.
import { PrimaryLeases } from '../../../src/admission/primary-leases';

const settled = async <T>(p: T | Promise<T>): Promise<T | 'pending'> => Promise.race([Promise.resolve(p), new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);

describe('PrimaryLeases', () => {
  it('admits at most the limit across workers, and counts a retry of a held lease once', () => {
    const leases = new PrimaryLeases();
    expect(leases.run(['acquire', 'k', 'a', 2], 1)).toEqual([1, 1]);
    expect(leases.run(['acquire', 'k', 'b', 2], 2)).toEqual([1, 2]);
    expect(leases.run(['acquire', 'k', 'a', 2], 1)).toEqual([1, 2]);
    expect(leases.run(['acquire', 'k', 'c', 2], 2)).toEqual([0, 2]);
    expect(leases.run(['acquire', 'other', 'c', 2], 2)).toEqual([1, 1]);
    leases.run(['release', 'k', 'a'], 1);
    expect(leases.run(['acquire', 'k', 'c', 2], 2)).toEqual([1, 2]);
    leases.run(['release', 'k', 'never-taken'], 1);
    expect(leases.inFlight('k')).toBe(2);
  });

  it('counts a kept lease whatever the limit (the worker\'s fallback admitted it)', () => {
    const leases = new PrimaryLeases();
    leases.run(['acquire', 'k', 'a', 1], 1);
    leases.run(['keep', 'k', 'b'], 2);
    expect(leases.inFlight('k')).toBe(2);
    leases.run(['release', 'k', 'a'], 1);
    expect(leases.run(['acquire', 'k', 'c', 1], 1)).toEqual([0, 1]);
  });

  it('frees every lease of a worker that exited, and takes nothing for it afterwards', () => {
    const leases = new PrimaryLeases();
    leases.run(['acquire', 'k', 'a', 3], 1);
    leases.run(['acquire', 'k', 'b', 3], 2);
    leases.run(['acquire', 'org', 'a', 3], 1);
    leases.exited(1);
    expect(leases.inFlight('k')).toBe(1);
    expect(leases.inFlight('org')).toBe(0);
    // A message the dead worker sent before it died, read after its exit.
    expect(leases.run(['acquire', 'k', 'late', 3], 1)).toEqual([0, 1]);
    leases.run(['keep', 'k', 'late2'], 1);
    expect(leases.inFlight('k')).toBe(1);
  });

  it('wakes a worker refused on a limit when a slot there frees on another worker, not for other limits', async () => {
    const leases = new PrimaryLeases();
    leases.run(['acquire', 'k', 'a', 1], 1);
    leases.run(['acquire', 'j', 'x', 1], 1);
    expect(leases.run(['acquire', 'k', 'b', 1], 2)).toEqual([0, 1]);
    const poll = leases.poll(2, 10_000);
    leases.run(['release', 'j', 'x'], 1);
    expect(await settled(poll)).toBe('pending');
    leases.run(['release', 'k', 'a'], 1);
    expect(await settled(poll)).toBe(true);
  });

  it('owes the wake to a worker whose poll comes after the release (nothing is missed between refusal and poll)', async () => {
    const leases = new PrimaryLeases();
    leases.run(['acquire', 'k', 'a', 1], 1);
    leases.run(['acquire', 'k', 'b', 1], 2);
    leases.run(['release', 'k', 'a'], 1);
    expect(await settled(leases.poll(2, 10_000))).toBe(true);
    // Owed once: the next poll waits.
    expect(await settled(leases.poll(2, 10_000))).toBe('pending');
  });

  it('does not wake the worker that released (it told its own waiters), unless the release was quiet', async () => {
    const leases = new PrimaryLeases();
    leases.run(['acquire', 'k', 'a', 1], 1);
    leases.run(['acquire', 'k', 'b', 1], 1);
    leases.run(['release', 'k', 'a'], 1);
    expect(await settled(leases.poll(1, 10_000))).toBe('pending');
    leases.run(['acquire', 'k', 'c', 1], 2);
    leases.run(['acquire', 'k', 'd', 1], 2);
    const poll = leases.poll(2, 10_000);
    leases.run(['drop', 'k', 'c'], 2);
    expect(await settled(poll)).toBe(true);
  });

  it('wakes the workers waiting on what an exited worker held', async () => {
    const leases = new PrimaryLeases();
    leases.run(['acquire', 'k', 'a', 1], 1);
    leases.run(['acquire', 'k', 'b', 1], 2);
    const poll = leases.poll(2, 10_000);
    leases.exited(1);
    expect(await settled(poll)).toBe(true);
    expect(leases.run(['acquire', 'k', 'b', 1], 2)).toEqual([1, 1]);
  });

  it('answers a poll false after its wait with nothing freed', async () => {
    const leases = new PrimaryLeases();
    await expect(leases.poll(1, 20)).resolves.toBe(false);
  });
});
