// One try at every in-flight limit of a request, all sent at once. Admitted
// only when every limit admits it; otherwise what it took (or may have taken,
// when an answer never came) is given back at once, quietly: nothing new is free.
import type { LeaseStore } from './leases';
import type { ConcurrencyLimit } from '../contract/admission';

export interface Held {
  readonly limits: readonly ConcurrencyLimit[];
  readonly lease: string;
  /** The limit with the fewest free slots after admission, for the headers. */
  readonly tightest: { limit: ConcurrencyLimit; remaining: number };
}

export interface Tried {
  held?: Held;
  /** The limits that refused it (empty when admitted or unavailable). */
  refused: ConcurrencyLimit[];
  /** A store could not answer and had no fallback (failMode closed). */
  unavailable: boolean;
  /** Some answer came from the in-process fallback. */
  inProcess: boolean;
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

export async function attempt(store: LeaseStore, limits: readonly ConcurrencyLimit[], lease: string): Promise<Tried> {
  const answers = await Promise.all(limits.map((l) => store.acquire(l.key, l.limit, lease).catch(asError)));
  const tried: Tried = { refused: [], unavailable: false, inProcess: false };
  let tightest: Held['tightest'] | undefined;
  for (let i = 0; i < answers.length; i++) {
    const a = answers[i];
    if (a instanceof Error) { tried.unavailable = true; continue; }
    if (a.inProcess) tried.inProcess = true;
    if (!a.admitted) { tried.refused.push(limits[i]); continue; }
    const remaining = Math.max(limits[i].limit - a.inFlight, 0);
    if (tightest === undefined || remaining < tightest.remaining) tightest = { limit: limits[i], remaining };
  }
  if (!tried.unavailable && tried.refused.length === 0) {
    tried.held = { limits, lease, tightest: tightest! };
    return tried;
  }
  for (let i = 0; i < answers.length; i++) {
    const a = answers[i];
    if (a instanceof Error || a.admitted || a.inProcess) store.release(limits[i].key, lease, true);
  }
  return tried;
}

export function release(store: LeaseStore, held: Held): void {
  for (const l of held.limits) store.release(l.key, held.lease);
}
