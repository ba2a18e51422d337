// The rate-limit plugin's limiters, and what it checks in a config.
import { RateLimiterRes } from 'rate-limiter-flexible';
import { decidedInProcess, InsuranceLimiter, LimiterPools } from '../../src/limiters/pools';
import { ConfigError, validateConfig } from '../../src/config/load';
import { gatewayConfigCheck } from '../../src/gateway';

describe('rate-limit limiters', () => {
  it('shares one limiter between equal budgets', () => {
    const limiterFor = new LimiterPools(undefined).source(undefined, 'open');
    expect(limiterFor(5, 60)).toBe(limiterFor(5, 60));
    expect(limiterFor(5, 60)).not.toBe(limiterFor(5, 30));
  });

  it('marks what the insurance limiter decided, admitted, refused or unread', async () => {
    const insurance = new InsuranceLimiter({ points: 1, duration: 60, keyPrefix: '' });
    expect(decidedInProcess(await insurance.get('a'))).toBe(true);
    expect(decidedInProcess(await insurance.consume('a'))).toBe(true);
    const refused = await insurance.consume('a').catch((r: unknown) => r);
    expect(refused).toBeInstanceOf(RateLimiterRes);
    expect(decidedInProcess(refused)).toBe(true);
    expect(decidedInProcess(new RateLimiterRes())).toBe(false);
    expect(decidedInProcess(null)).toBe(false);
  });
});

describe('rate-limit config check', () => {
  it('refuses budgets when the rate-limit plugin is not in the chain (its fields, declared on limits)', () => {
    const check = gatewayConfigCheck();
    const raw = { keys: [{ id: 'k', sha256: 'a'.repeat(64), limits: { requests: 1 } }] };
    expect(() => validateConfig(raw, 'inline.yaml', {}, check)).toThrow(ConfigError);
    expect(() => validateConfig(raw, 'inline.yaml', {}, check)).toThrow(/keys\[0\]\.limits\.requests: requests needs the rate-limit plugin/);
    expect(() => validateConfig({ orgs: { acme: { limits: { tokens: 5 } } } }, 'inline.yaml', {}, check)).toThrow(/orgs\.acme\.limits\.tokens/);
    expect(() => validateConfig({ ...raw, plugins: [{ name: 'rate-limit' }] }, 'inline.yaml', {}, check)).not.toThrow();
  });

  it('checks its fields with their paths, and names a field nobody declared', () => {
    const check = gatewayConfigCheck();
    const bad = { keys: [{ id: 'k', sha256: 'a'.repeat(64), limits: { requests: 0, tokenz: 5 } }], plugins: [{ name: 'rate-limit' }] };
    const problems = (() => { try { validateConfig(bad, 'inline.yaml', {}, check); return []; } catch (err) { return (err as ConfigError).problems; } })();
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(/^keys\[0\]\.limits\.requests: /), 'keys[0].limits.tokenz: unknown field']));
  });

  it('keeps in-flight limits in the core: no plugin needed, and the old settings say where they went', () => {
    const check = gatewayConfigCheck();
    const upstreams = { b: { url: 'http://127.0.0.1:1/v1', maxInFlight: 4 } };
    expect(() => validateConfig({ upstreams, keys: [{ id: 'k', sha256: 'a'.repeat(64), limits: { concurrency: 2 } }] }, 'inline.yaml', {}, check)).not.toThrow();
    expect(() => validateConfig({ plugins: [{ name: 'rate-limit', queueTimeoutMs: 5 }] }, 'inline.yaml', {}, check)).toThrow(/plugins\[0\]\.queueTimeoutMs: moved: set admission\.queueTimeoutMs instead/);
  });

  it('refuses a dollar budget without prices, and names a bad window or enforcement', () => {
    const check = gatewayConfigCheck();
    const keys = [{ id: 'k', sha256: 'a'.repeat(64), limits: { dollars: 5 } }];
    const problemsOf = (raw: object): string[] => { try { validateConfig(raw, 'inline.yaml', {}, check); return []; } catch (err) { return (err as ConfigError).problems; } };
    expect(problemsOf({ keys, orgs: { acme: { limits: { dollars: 50, dollarWindow: 'day' } } }, plugins: [{ name: 'rate-limit', defaults: { dollars: 1 } }] })).toEqual([
      'keys[0].limits.dollars: a dollar budget needs prices: add a pricing section naming the models\' prices (see the reference config)',
      'orgs.acme.limits.dollars: a dollar budget needs prices: add a pricing section naming the models\' prices (see the reference config)',
      'plugins[0].defaults.dollars: a dollar budget needs prices: add a pricing section naming the models\' prices (see the reference config)',
    ]);
    const pricing = [{ model: '*', input: 1, output: 2 }];
    expect(problemsOf({ keys, pricing, plugins: [{ name: 'rate-limit' }] })).toEqual([]);
    const bad = [{ id: 'k', sha256: 'a'.repeat(64), limits: { dollars: -1, dollarWindow: 'week', enforce: 'strict' } }];
    expect(problemsOf({ keys: bad, pricing, plugins: [{ name: 'rate-limit' }] })).toEqual(expect.arrayContaining([
      expect.stringMatching(/^keys\[0\]\.limits\.dollars: /), expect.stringMatching(/^keys\[0\]\.limits\.dollarWindow: /), expect.stringMatching(/^keys\[0\]\.limits\.enforce: /),
    ]));
  });

  it('takes a per-user template on a key or a team, checked as a budget is, and refuses one on an org', () => {
    const check = gatewayConfigCheck();
    const problemsOf = (raw: object): string[] => { try { validateConfig(raw, 'inline.yaml', {}, check); return []; } catch (err) { return (err as ConfigError).problems; } };
    const key = (limits: object, extra: object = {}) => [{ id: 'k', sha256: 'a'.repeat(64), org: 'acme', team: 't', endUsers: { header: 'X-End-User' }, limits, ...extra }];
    const teams = { t: { org: 'acme', limits: { perUser: { requests: 5 } } } };
    const plugins = [{ name: 'rate-limit' }];
    expect(problemsOf({ keys: key({ perUser: { tokens: 1000, windowSeconds: 3600 } }), orgs: { acme: {} }, teams, plugins })).toEqual([]);
    expect(problemsOf({ keys: key({ perUser: { tokens: 'lots', windows: 3 } }), orgs: { acme: {} }, teams, plugins })).toEqual(expect.arrayContaining([
      expect.stringMatching(/^keys\[0\]\.limits\.perUser\.tokens: /), expect.stringMatching(/^keys\[0\]\.limits\.perUser: .*windows/),
    ]));
    expect(problemsOf({ keys: key({ perUser: { dollars: 1 } }), orgs: { acme: { limits: { perUser: { requests: 1 } } } }, teams, plugins })).toEqual([
      'keys[0].limits.perUser.dollars: a dollar budget needs prices: add a pricing section naming the models\' prices (see the reference config)',
      'orgs.acme.limits.perUser: a per-user budget goes on a key or a team (limits.perUser), whose end users it bounds',
    ]);
    expect(problemsOf({ keys: key({}, { endUsers: { header: 'x end' } }), orgs: { acme: {} }, teams, plugins })).toEqual([expect.stringMatching(/^keys\[0\]\.endUsers\.header: must be a header name/)]);
  });
});
