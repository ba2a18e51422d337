// Asserts that a response is the gateway's error object for one reason.
import type { JsonResponse } from './http';
import { errorType } from '../../src/contract/errors';

/** `backend`: the code and type a backend's own refusal carried, which the client gets in place of the defaults. */
export function expectError(res: JsonResponse, status: number, reason: string, param?: string | null, backend?: { code: string; type?: string }): void {
  expect({ status: res.status, reason: res.body?.error?.reason }).toEqual({ status, reason });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(res.body)).toEqual(['error']);
  expect(Object.keys(res.body.error)).toEqual(['message', 'param', 'reason', 'status', 'code', 'type']);
  expect(res.body.error.status).toBe(status);
  expect(res.body.error.code).toBe(backend?.code ?? reason);
  expect(res.body.error.type).toBe(backend?.type ?? errorType(status));
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.message.length).toBeGreaterThan(10);
  if (param !== undefined) expect(res.body.error.param).toBe(param);
}
