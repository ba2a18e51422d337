// The metrics plugin's hooks on small contexts: registration survives config
// reloads, labels stay bounded, gauges go up and come back down.
import { Registry } from 'prom-client';
import { GatewayError, type Outcome, type RequestContext } from '../../src';
import { pluginEnv, withState } from './helpers';
import { validateConfig } from '../../src/config/load';
import { plugin } from '../../plugins/metrics';
import { DURATION_BUCKETS, FIRST_BYTE_BUCKETS } from '../../plugins/metrics/metrics';
import { counted, parseExposition, series } from '../support/metrics';

const config = validateConfig({
  keys: [{ id: 'alice', sha256: 'a'.repeat(64), org: 'acme' }],
  orgs: { acme: {} },
  upstreams: { b: { url: 'http://127.0.0.1:1/v1' } },
  routes: [{ model: 'exact-1', upstream: 'b' }, { model: 'glob-*', upstream: 'b', advertise: ['glob-listed'] }],
});

function context(overrides: Partial<RequestContext> = {}): RequestContext {
  return {
    id: 'req-1', startedAt: 0, version: 'v1', endpoint: 'chat', protocol: 'chat', stream: false, texts: [], timings: {},
    setHeader: () => undefined, capOutput: () => undefined, signal: new AbortController().signal,
    principal: { id: 'alice', org: 'acme', team: null, mayUse: () => true, anyModel: true, entry: {} },
    route: { index: 0, upstream: 'b', dialect: 'interface', fallbacks: [], failoverOn: [], continueOnFailure: false, hostedTools: 'drop' },
    ...overrides,
  };
}

const outcome = (status: number, reason: Outcome['reason'] = null): Outcome => ({ status, reason, aborted: reason === 'client_closed', durationMs: 12 });

async function create(registry: Registry, cfg = config) {
  return withState(await plugin.create({}, pluginEnv(plugin, cfg, { metrics: registry })));
}

const scrape = async (registry: Registry) => parseExposition(await registry.metrics());

describe('metrics plugin', () => {
  it('registers each metric once per registry, so a reload keeps counting', async () => {
    const registry = new Registry();
    const first = await create(registry);
    first.onFinish!(context({ model: 'exact-1' }), outcome(200));
    const second = await create(registry); // a config reload
    second.onFinish!(context({ model: 'exact-1' }), outcome(200));
    expect(series(await scrape(registry), 'sluice_requests_total')).toEqual({ 'endpoint=chat,model=exact-1,protocol=chat,reason=,status=200,version=v1': 2 });
  });

  it('labels a model with its configured id, "other", or nothing when none was named', async () => {
    const registry = new Registry();
    const hooks = await create(registry);
    for (const model of ['exact-1', 'glob-listed', 'glob-unlisted', 'something-else', undefined]) hooks.onFinish!(context({ model }), outcome(200));
    expect(series(await scrape(registry), 'sluice_request_duration_seconds_count')).toEqual({
      'endpoint=chat,model=exact-1,protocol=chat,stream=false': 1,
      'endpoint=chat,model=glob-listed,protocol=chat,stream=false': 1,
      'endpoint=chat,model=other,protocol=chat,stream=false': 2,
      'endpoint=chat,model=,protocol=chat,stream=false': 1,
    });
  });

  it('follows the reloaded config\'s models', async () => {
    const registry = new Registry();
    await create(registry);
    const reloaded = await create(registry, { ...config, routes: [{ ...config.routes[0], model: 'exact-2' }] });
    reloaded.onFinish!(context({ model: 'exact-1' }), outcome(200));
    reloaded.onFinish!(context({ model: 'exact-2' }), outcome(200));
    expect(Object.keys(series(await scrape(registry), 'sluice_requests_total')).sort()).toEqual([
      'endpoint=chat,model=exact-2,protocol=chat,reason=,status=200,version=v1',
      'endpoint=chat,model=other,protocol=chat,reason=,status=200,version=v1',
    ]);
  });

  it('holds a request on the gauges from onRequest and a stream from its head, until the finish', async () => {
    const registry = new Registry();
    const hooks = await create(registry);
    const ctx = context({ model: 'exact-1', stream: true });
    await hooks.onRequest!(ctx);
    hooks.onResponseHead!(ctx, { status: 200, stream: true });
    let samples = await scrape(registry);
    expect(series(samples, 'sluice_inflight_requests')).toEqual({ '': 1 });
    expect(series(samples, 'sluice_active_streams')).toEqual({ '': 1 });
    hooks.onFinish!(ctx, outcome(499, 'client_closed'));
    samples = await scrape(registry);
    expect(series(samples, 'sluice_inflight_requests')).toEqual({ '': 0 });
    expect(series(samples, 'sluice_active_streams')).toEqual({ '': 0 });
  });

  it('does not count a request whose finish ran before its onRequest (client left during an awaited hook)', async () => {
    const registry = new Registry();
    const hooks = await create(registry);
    const ctx = context({ model: 'exact-1' });
    hooks.onFinish!(ctx, outcome(499, 'client_closed'));
    await hooks.onRequest!(ctx);
    hooks.onResponseHead!(ctx, { status: 200, stream: true });
    const samples = await scrape(registry);
    expect(series(samples, 'sluice_inflight_requests')).toEqual({ '': 0 });
    expect(series(samples, 'sluice_active_streams')).toEqual({ '': 0 });
  });

  it('keeps labels from error details to the known values', async () => {
    const registry = new Registry();
    const hooks = await create(registry);
    const refuse = (details?: Record<string, string>) => new GatewayError('rate_limited', 'no', { details });
    hooks.onFinish!(context({ error: refuse({ scope: 'org', budget: 'tokens' }) }), outcome(429, 'rate_limited'));
    hooks.onFinish!(context({ error: refuse({ scope: 'user-42', budget: 'x' }) }), outcome(429, 'rate_limited'));
    hooks.onFinish!(context({ error: refuse() }), outcome(429, 'rate_limited'));
    const failed = new GatewayError('upstream_error', 'no', { details: { kind: 'weird', upstream: 'b' } });
    hooks.onFinish!(context({ error: failed }), outcome(502, 'upstream_error'));
    const samples = await scrape(registry);
    expect(counted(series(samples, 'sluice_rate_limited_total'))).toEqual({ 'budget=tokens,scope=org': 1, 'budget=other,scope=other': 2 });
    expect(counted(series(samples, 'sluice_upstream_errors_total'))).toEqual({ 'kind=other,upstream=b': 1 });
  });

  it('starts refusal and failure series at 0 for every known label value, and a reload\'s new upstreams too', async () => {
    const registry = new Registry();
    await create(registry);
    let samples = await scrape(registry);
    expect(series(samples, 'sluice_rate_limited_total')).toEqual({
      'budget=requests,scope=key': 0, 'budget=tokens,scope=key': 0, 'budget=concurrency,scope=key': 0,
      'budget=requests,scope=org': 0, 'budget=tokens,scope=org': 0, 'budget=concurrency,scope=org': 0,
      'budget=requests,scope=team': 0, 'budget=tokens,scope=team': 0,
      'budget=concurrency,scope=model': 0, 'budget=concurrency,scope=upstream': 0, 'budget=requests,scope=backend': 0,
    });
    expect(series(samples, 'sluice_content_filter_blocks_total')).toEqual({ 'endpoint=chat': 0, 'endpoint=embeddings': 0, 'endpoint=images': 0, 'endpoint=moderations': 0, 'endpoint=passthrough': 0, 'endpoint=rerank': 0, 'endpoint=score': 0, 'endpoint=speech': 0, 'endpoint=transcriptions': 0, 'endpoint=translations': 0 });
    expect(series(samples, 'sluice_upstream_errors_total')).toEqual({ 'kind=connect,upstream=b': 0, 'kind=timeout,upstream=b': 0, 'kind=status,upstream=b': 0, 'kind=stream,upstream=b': 0 });
    await create(registry, validateConfig({ upstreams: { c: { url: 'http://127.0.0.1:2/v1' } } }));
    samples = await scrape(registry);
    expect(Object.keys(series(samples, 'sluice_upstream_errors_total')).filter((k) => k.endsWith('upstream=c'))).toHaveLength(4);
  });

  it('counts tokens under the key id and org, never anything the client sent', async () => {
    const registry = new Registry();
    const hooks = await create(registry);
    const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, estimated: true };
    hooks.onFinish!(context({ model: 'glob-listed', usage, principal: { id: 'alice', org: null, team: null, mayUse: () => true, anyModel: true, entry: {} } }), outcome(200));
    expect(series(await scrape(registry), 'sluice_tokens_total')).toEqual({
      'estimated=true,key=alice,model=glob-listed,org=,team=,type=prompt': 3,
      'estimated=true,key=alice,model=glob-listed,org=,team=,type=completion': 4,
    });
  });

  it('counts cached and reasoning tokens as their own types, once a request reports some', async () => {
    const registry = new Registry();
    const hooks = await create(registry);
    const principal = { id: 'alice', org: 'acme', team: null, mayUse: () => true, anyModel: true, entry: {} };
    hooks.onFinish!(context({ model: 'glob-listed', usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14, estimated: false }, principal }), outcome(200));
    hooks.onFinish!(context({ model: 'glob-listed', usage: { prompt_tokens: 1200, completion_tokens: 345, total_tokens: 1545, estimated: false, cached_tokens: 400, reasoning_tokens: 120 }, principal }), outcome(200));
    expect(series(await scrape(registry), 'sluice_tokens_total')).toEqual({
      'estimated=false,key=alice,model=glob-listed,org=acme,team=,type=prompt': 1210,
      'estimated=false,key=alice,model=glob-listed,org=acme,team=,type=cached': 400,
      'estimated=false,key=alice,model=glob-listed,org=acme,team=,type=completion': 349,
      'estimated=false,key=alice,model=glob-listed,org=acme,team=,type=reasoning': 120,
    });
  });

  it('refuses to start without a registry to write to', async () => {
    await expect(async () => plugin.create({}, pluginEnv(plugin, config, {}))).rejects.toThrow(/services\.metrics/);
  });

  it('uses ascending buckets from milliseconds to minutes', () => {
    for (const buckets of [DURATION_BUCKETS, FIRST_BYTE_BUCKETS]) {
      expect([...buckets].sort((a, b) => a - b)).toEqual(buckets);
      expect(buckets[0]).toBeLessThanOrEqual(0.005);
    }
    expect(DURATION_BUCKETS.at(-1)).toBeGreaterThanOrEqual(600);
    expect(FIRST_BYTE_BUCKETS.at(-1)).toBeGreaterThanOrEqual(60);
  });
});
