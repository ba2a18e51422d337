// The admin API from a test: an admin key of the test's own making, and one
// call helper, so every suite speaks to the listener the same way.
import { hashKey } from '../../src/auth/keys';
import { call, type JsonResponse } from './http';
import { makeKey } from './gateway';
import { until } from './wait';

/** A fresh admin key and the digest that goes under admin.keys. */
export function makeAdminKey(): { key: string; digest: string } {
  const { key } = makeKey('admin');
  return { key, digest: hashKey(key) };
}

/** One admin call: `key` undefined sends no Authorization header. */
export function admin(base: string, method: string, path: string, key: string | undefined, body?: unknown): Promise<JsonResponse> {
  const headers: Record<string, string> = key === undefined ? {} : { authorization: `Bearer ${key}` };
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  return call(method, `${base}${path}`, payload, headers);
}

/** Resolves with how long it took once `check` holds, failing if that is longer than `ms`: "within 1 s" is a bound, not a sleep. */
export async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  await until(check, `${what} within ${ms} ms`, ms);
  const took = Date.now() - start;
  if (took > ms) throw new Error(`${what} took ${took} ms, more than ${ms} ms`);
  return took;
}
