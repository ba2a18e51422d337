// Tool-call limits' pure parts, table-tested: which limits a call counts
// against (globs of "<server>/<tool>", hostile names included), the store
// keys, and the verdict from the limiters' answers. (mcp.limits at load:
// mcp-policy.test.ts, with the rest of the mcp section.)
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Limiter } from '../../../src/limiters/pools';
import { compileLimits, limitsNaming } from '../../../src/mcp/limits';
import { verdictOf } from '../../../src/mcp/limit-verdict';

/** A stand-in store that names the budget it was asked for: compiling a limit must not count anything. */
const limiterFor = (points: number, windowSeconds: number) => ({ points, windowSeconds }) as unknown as Limiter;

describe('which limits a tool call counts against', () => {
  const limits = compileLimits('key', 'ci', {
    'files/add': { requests: 5 },
    'files/*': { requests: 100, windowSeconds: 3600 },
    '*/read_*': { requests: 20 },
    'git?/x.y': { requests: 1 },
  }, 'sluice:', limiterFor);
  const named = (server: string, tool: string) => limitsNaming(limits, server, tool).map((l) => l.key.slice('sluice:{key:ci}:mcp:'.length));

  it.each([
    ['files', 'add', ['files/add', 'files/*']],
    ['files', 'read_me', ['files/*', '*/read_*']],
    ['github', 'read_file', ['*/read_*']],
    ['github', 'add', []],
    ['gitx', 'x.y', ['git?/x.y']],
    // A glob's "." and other regex characters are literal; a client's "*" in a name is a character, not a glob.
    ['gitx', 'xzy', []],
    ['files', 'ad*', ['files/*']],
    ['fil*', 'add', []],
    ['files', 'add ', ['files/*']],
    ['files', '', ['files/*']],
    ['files', 'a/dd', ['files/*']],
  ])('%s/%s counts against %j', (server, tool, expected) => {
    expect(named(server, tool)).toEqual(expected);
  });

  it('keeps each limit\'s size, window and store key: the key\'s or org\'s hash tag, then the glob', () => {
    expect(limits.map((l) => [l.scope, l.points, l.key, l.limiter])).toEqual([
      ['key', 5, 'sluice:{key:ci}:mcp:files/add', { points: 5, windowSeconds: 60 }],
      ['key', 100, 'sluice:{key:ci}:mcp:files/*', { points: 100, windowSeconds: 3600 }],
      ['key', 20, 'sluice:{key:ci}:mcp:*/read_*', { points: 20, windowSeconds: 60 }],
      ['key', 1, 'sluice:{key:ci}:mcp:git?/x.y', { points: 1, windowSeconds: 60 }],
    ]);
    expect(compileLimits('org', 'acme', { '*/*': { requests: '7' } }, 'p:', limiterFor).map((l) => [l.key, l.points])).toEqual([['p:{org:acme}:mcp:*/*', 7]]);
  });

  it('has none without limits, and none from an entry that is not limits (a runtime key is checked before it is stored)', () => {
    expect(compileLimits('key', 'ci', undefined, 'p:', limiterFor)).toEqual([]);
    expect(compileLimits('key', 'ci', { add: { requests: 1 } }, 'p:', limiterFor)).toEqual([]);
    expect(compileLimits('key', 'ci', [1, 2], 'p:', limiterFor)).toEqual([]);
  });
});

describe('a call\'s verdict from its limits\' answers', () => {
  const res = (consumed: number, msBeforeNext: number) => new RateLimiterRes(Math.max(10 - consumed, 0), msBeforeNext, consumed, false);
  const limits = [{ points: 10 }, { points: 10 }];

  it.each([
    ['both within', [res(3, 500), res(10, 900)], { verdict: 'admitted', retryAfterMs: 0, counted: [true, true] }],
    ['one over: wait for it', [res(3, 500), res(11, 900)], { verdict: 'limited', retryAfterMs: 900, counted: [true, true] }],
    ['both over: wait for the later', [res(12, 4000), res(11, 900)], { verdict: 'limited', retryAfterMs: 4000, counted: [true, true] }],
    ['over with a window ending now: at least 1 ms', [res(11, 0), res(1, 10)], { verdict: 'limited', retryAfterMs: 1, counted: [true, true] }],
    ['a store failed', [res(3, 500), new Error('Command timed out')], { verdict: 'unavailable', retryAfterMs: 0, counted: [true, false] }],
    ['a store failed and another is over: limited', [new Error('down'), res(11, 700)], { verdict: 'limited', retryAfterMs: 700, counted: [false, true] }],
  ])('%s', (_name, answers, expected) => {
    expect(verdictOf(limits, answers)).toEqual(expected);
  });
});
