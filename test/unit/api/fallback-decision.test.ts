// The fallback decision as a table: which error goes on to which remaining
// fallback, before anything reached the client and after a stream was cut.
import { decideFallback, type FallbackFacts, type FallbackOption } from '../../../src/api/fallback-decision';
import { GatewayError } from '../../../src/contract/errors';

const option = (id: string, extra: Partial<FallbackOption> = {}): FallbackOption => ({ id, routed: true, allowed: true, dialectFits: true, continues: false, ...extra });
const failed = new GatewayError('upstream_error', 'x', { details: { kind: 'status' } });
const timedOut = new GatewayError('upstream_timeout', 'x');
const unavailable = new GatewayError('upstream_unavailable', 'x');
const resting = new GatewayError('rate_limited', 'x', { details: { scope: 'backend' } });
const ourLimit = new GatewayError('rate_limited', 'x', { details: { scope: 'key' } });
const rejected = (status: number, backendCode?: string) => new GatewayError('upstream_rejected', 'x', { status, details: backendCode ? { backendCode } : {} });

const before: FallbackFacts = { when: 'before', err: failed, failoverOn: [], clientGone: false, mayContinue: false, relayed: undefined, left: [option('a'), option('b')] };
const cut: FallbackFacts = { when: 'cut', err: failed, failoverOn: [], clientGone: false, mayContinue: true, relayed: 'some text', left: [option('a'), option('b', { continues: true })] };

const rows: Array<[string, FallbackFacts, number]> = [
  ['a 5xx or a broken backend: the first fallback', before, 0],
  ['a timeout', { ...before, err: timedOut }, 0],
  ['every endpoint out of rotation', { ...before, err: unavailable }, 0],
  ['the backend resting after a 429', { ...before, err: resting }, 0],
  ['a 429 from the backend', { ...before, err: rejected(429) }, 0],
  ['the gateway\'s own rate limit: never', { ...before, err: ourLimit }, -1],
  ['a 400: never', { ...before, err: rejected(400, 'context_length_exceeded') }, -1],
  ['a 400 whose code the route names', { ...before, err: rejected(400, 'context_length_exceeded'), failoverOn: ['context_length_exceeded'] }, 0],
  ['an error that is not the gateway\'s', { ...before, err: new Error('bug') }, -1],
  ['the client left', { ...before, clientGone: true }, -1],
  ['no fallback left', { ...before, left: [] }, -1],
  ['passes over one no route serves', { ...before, left: [option('a', { routed: false }), option('b')] }, 1],
  ['passes over one the key may not use', { ...before, left: [option('a', { allowed: false }), option('b')] }, 1],
  ['passes over one whose dialect does not take the messages', { ...before, left: [option('a', { dialectFits: false }), option('b')] }, 1],
  ['none fits', { ...before, left: [option('a', { allowed: false })] }, -1],
  ['cut: the first that continues an assistant prefix', cut, 1],
  ['cut: a timeout (a stall)', { ...cut, err: timedOut }, 1],
  ['cut: once only', { ...cut, mayContinue: false }, -1],
  ['cut before any text', { ...cut, relayed: '' }, -1],
  ['cut: not by a refusal', { ...cut, err: rejected(400) }, -1],
  ['cut: the client left', { ...cut, clientGone: true }, -1],
  ['cut: one that continues but the key may not use', { ...cut, left: [option('b', { continues: true, allowed: false })] }, -1],
];

describe('the fallback decision', () => {
  it.each(rows)('%s', (_name, facts, expected) => {
    expect(decideFallback(facts)).toBe(expected);
  });
});
