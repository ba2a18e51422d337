// The metrics plugin end to end: a mix of requests through the real gateway
// against a real backend, then a scrape of the metrics listener over HTTP.
// Counters and histogram counts must be exactly what those requests imply.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { GatewayError, type PluginDefinition } from '../../src';
import { z } from 'zod';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post, postSse } from '../support/http';
import { counted, parseExposition, promtoolCheck, scrape, series, type Sample } from '../support/metrics';
import { until } from '../support/wait';

// Stands in for the rate-limit plugin, so this test depends on neither Redis nor its budgets.
const denyByModel: PluginDefinition<Record<string, never>> = {
  name: 'test-deny',
  schema: z.strictObject({}),
  create: () => ({
    onRequest(ctx) {
      if (ctx.model === 'limited-key') throw new GatewayError('rate_limited', 'slow down', { details: { scope: 'key', budget: 'requests' } });
      if (ctx.model === 'limited-org') throw new GatewayError('rate_limited', 'slow down', { details: { scope: 'org', budget: 'tokens' } });
    },
  }),
};

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('metrics: counters and histograms after a mix of requests', () => {
  let backend: Backend;
  let gw: TestGateway;
  let samples: Sample[];
  let exposition: string;
  const alice = makeKey('alice', { org: 'acme' });
  const bob = makeKey('bob', { org: 'beta' });
  const carol = makeKey('carol', { org: 'acme' });

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 5, gapMs: 20, slowMs: 400 });
    gw = await startGateway({
      keys: [alice.entry, bob.entry, carol.entry],
      orgs: { acme: {}, beta: {} },
      upstreams: {
        b: { url: backend.base, format: 'openai' },
        slow: { url: backend.base, format: 'openai', timeoutMs: 100 },
        dead: { url: `http://127.0.0.1:${await closedPort()}/v1`, format: 'openai' },
      },
      routes: [
        { model: 'slow-*', upstream: 'slow', advertise: ['slow-1'] },
        { model: 'dead-*', upstream: 'dead', advertise: ['dead-1'] },
        { model: 'img-1', upstream: 'b', endpoints: ['images'] },
        { model: '*', upstream: 'b', advertise: ['ok-1', 'ok-stream', 'nousage-1', 'status-500', 'status-404', 'break-1', 'limited-key', 'limited-org'] },
      ],
      plugins: [
        { name: 'content-filter', terms: ['forbidden phrase'] },
        { name: 'test-deny' },
        { name: 'metrics' },
      ],
    }, { plugins: [denyByModel], metrics: {} });

    const v1 = `${gw.url}/v1`;
    const v2 = `${gw.url}/v2`;
    const expectStatus = async (pending: Promise<{ status: number }>, status: number) => expect((await pending).status).toBe(status);
    await expectStatus(post(`${v1}/chat/completions`, chat('ok-1'), bearer(alice.key)), 200);
    await expectStatus(post(`${v1}/chat/completions`, chat('ok-1'), bearer(alice.key)), 200);
    await expectStatus(post(`${v2}/chat/completions`, chat('ok-unlisted'), bearer(bob.key)), 200);
    await expectStatus(post(`${v1}/chat/completions`, chat('nousage-1'), bearer(alice.key)), 200);
    const streamed = await postSse(`${v1}/chat/completions`, chat('ok-stream', { stream: true }), bearer(alice.key));
    expect(streamed.events.at(-1)?.data).toBe('[DONE]');
    await expectStatus(post(`${v1}/images/generations`, { model: 'img-1', prompt: 'a cat' }, bearer(alice.key)), 200);
    await expectStatus(post(`${v1}/chat/completions`, chat('ok-1', { messages: [{ role: 'user', content: 'a forbidden phrase' }] }), bearer(alice.key)), 400);
    await expectStatus(post(`${v2}/images/generations`, { model: 'img-1', prompt: 'forbidden phrase' }, bearer(alice.key)), 400);
    await expectStatus(post(`${v1}/chat/completions`, chat('limited-key'), bearer(alice.key)), 429);
    await expectStatus(post(`${v1}/chat/completions`, chat('limited-org'), bearer(bob.key)), 429);
    await expectStatus(post(`${v1}/chat/completions`, chat('status-500'), bearer(alice.key)), 502);
    await expectStatus(post(`${v1}/chat/completions`, chat('status-404'), bearer(alice.key)), 404);
    await expectStatus(post(`${v1}/chat/completions`, chat('dead-1'), bearer(alice.key)), 502);
    await expectStatus(post(`${v1}/chat/completions`, chat('slow-1'), bearer(alice.key)), 504);
    const broken = await postSse(`${v1}/chat/completions`, chat('break-1', { stream: true }), bearer(alice.key));
    expect(JSON.parse(broken.events.at(-1)!.data).error.reason).toBe('upstream_error');
    const aborted = await postSse(`${v1}/chat/completions`, chat('ok-stream', { stream: true }), bearer(carol.key), 2);
    expect(aborted.events).toHaveLength(2);
    await expectStatus(post(`${v1}/chat/completions`, chat('ok-1')), 401);
    await expectStatus(call('GET', `${v1}/models`, undefined, bearer(alice.key)), 200);

    // Finish hooks run when the server side of each response closes; the
    // aborted stream's may land a moment after the client has moved on.
    await until(async () => {
      exposition = (await scrape(gw.metrics!.url)).text;
      samples = parseExposition(exposition);
      return Object.values(series(samples, 'sluice_requests_total')).reduce((a, b) => a + b, 0) === 18;
    }, 'all 18 requests counted', 5000);
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  it('counts every request by endpoint, version, model, status and reason', () => {
    expect(series(samples, 'sluice_requests_total')).toEqual({
      'endpoint=chat,model=ok-1,protocol=chat,reason=,status=200,version=v1': 2,
      'endpoint=chat,model=other,protocol=chat,reason=,status=200,version=v2': 1,
      'endpoint=chat,model=nousage-1,protocol=chat,reason=,status=200,version=v1': 1,
      'endpoint=chat,model=ok-stream,protocol=chat,reason=,status=200,version=v1': 1,
      'endpoint=images,model=img-1,protocol=chat,reason=,status=200,version=v1': 1,
      'endpoint=chat,model=ok-1,protocol=chat,reason=content_filter,status=400,version=v1': 1,
      'endpoint=images,model=img-1,protocol=chat,reason=content_filter,status=400,version=v2': 1,
      'endpoint=chat,model=limited-key,protocol=chat,reason=rate_limited,status=429,version=v1': 1,
      'endpoint=chat,model=limited-org,protocol=chat,reason=rate_limited,status=429,version=v1': 1,
      'endpoint=chat,model=status-500,protocol=chat,reason=upstream_error,status=502,version=v1': 1,
      'endpoint=chat,model=status-404,protocol=chat,reason=upstream_rejected,status=404,version=v1': 1,
      'endpoint=chat,model=dead-1,protocol=chat,reason=upstream_error,status=502,version=v1': 1,
      'endpoint=chat,model=slow-1,protocol=chat,reason=upstream_timeout,status=504,version=v1': 1,
      'endpoint=chat,model=break-1,protocol=chat,reason=upstream_error,status=502,version=v1': 1,
      'endpoint=chat,model=ok-stream,protocol=chat,reason=client_closed,status=499,version=v1': 1,
      'endpoint=chat,model=,protocol=chat,reason=unauthorized,status=401,version=v1': 1,
      'endpoint=models,model=,protocol=chat,reason=,status=200,version=v1': 1,
    });
  });

  it('observes every request once in the duration histogram', () => {
    expect(series(samples, 'sluice_request_duration_seconds_count')).toEqual({
      'endpoint=chat,model=ok-1,protocol=chat,stream=false': 3,
      'endpoint=chat,model=other,protocol=chat,stream=false': 1,
      'endpoint=chat,model=nousage-1,protocol=chat,stream=false': 1,
      'endpoint=chat,model=ok-stream,protocol=chat,stream=true': 2,
      'endpoint=images,model=img-1,protocol=chat,stream=false': 2,
      'endpoint=chat,model=limited-key,protocol=chat,stream=false': 1,
      'endpoint=chat,model=limited-org,protocol=chat,stream=false': 1,
      'endpoint=chat,model=status-500,protocol=chat,stream=false': 1,
      'endpoint=chat,model=status-404,protocol=chat,stream=false': 1,
      'endpoint=chat,model=dead-1,protocol=chat,stream=false': 1,
      'endpoint=chat,model=slow-1,protocol=chat,stream=false': 1,
      'endpoint=chat,model=break-1,protocol=chat,stream=true': 1,
      'endpoint=chat,model=,protocol=chat,stream=false': 1,
      'endpoint=models,model=,protocol=chat,stream=false': 1,
    });
    // The timed-out request waited for the upstream's 100 ms timeout.
    const slow = samples.find((s) => s.name === 'sluice_request_duration_seconds_sum' && s.labels.model === 'slow-1')!;
    expect(slow.value).toBeGreaterThanOrEqual(0.1);
    expect(slow.value).toBeLessThan(0.4);
  });

  it('observes the backend first byte only for requests that got an answer head', () => {
    expect(series(samples, 'sluice_upstream_ttfb_seconds_count')).toEqual({
      'model=ok-1,upstream=b': 2,
      'model=other,upstream=b': 1,
      'model=nousage-1,upstream=b': 1,
      'model=ok-stream,upstream=b': 2,
      'model=img-1,upstream=b': 1,
      'model=status-500,upstream=b': 1,
      'model=status-404,upstream=b': 1,
      'model=break-1,upstream=b': 1,
    });
  });

  it('observes the first streamed event of each stream that sent one', () => {
    expect(series(samples, 'sluice_stream_first_event_seconds_count')).toEqual({
      'model=ok-stream': 2,
      'model=break-1': 1,
    });
  });

  it('counts tokens by type, model, key, org and whether they were estimated', () => {
    // nousage-1: the backend reports none; "hi" is 1 token, the 30-character reply 8 (4 characters a token).
    expect(series(samples, 'sluice_tokens_total')).toEqual({
      'estimated=false,key=alice,model=ok-1,org=acme,team=,type=prompt': 22,
      'estimated=false,key=alice,model=ok-1,org=acme,team=,type=completion': 10,
      'estimated=false,key=bob,model=other,org=beta,team=,type=prompt': 11,
      'estimated=false,key=bob,model=other,org=beta,team=,type=completion': 5,
      'estimated=false,key=alice,model=ok-stream,org=acme,team=,type=prompt': 11,
      'estimated=false,key=alice,model=ok-stream,org=acme,team=,type=completion': 5,
      'estimated=true,key=alice,model=nousage-1,org=acme,team=,type=prompt': 1,
      'estimated=true,key=alice,model=nousage-1,org=acme,team=,type=completion': 8,
      // Streams cut short (backend broke off; client left) are charged an estimate of
      // what was relayed: two words, "alpha beta" = 10 characters = 3 tokens.
      'estimated=true,key=alice,model=break-1,org=acme,team=,type=prompt': 1,
      'estimated=true,key=alice,model=break-1,org=acme,team=,type=completion': 3,
      'estimated=true,key=carol,model=ok-stream,org=acme,team=,type=prompt': 1,
      'estimated=true,key=carol,model=ok-stream,org=acme,team=,type=completion': 3,
      // An image answer without usage: its prompt's estimate, no completion tokens.
      'estimated=true,key=alice,model=img-1,org=acme,team=,type=prompt': 2,
      'estimated=true,key=alice,model=img-1,org=acme,team=,type=completion': 0,
    });
  });

  it('counts refusals and backend failures by their bounded labels', () => {
    expect(counted(series(samples, 'sluice_rate_limited_total'))).toEqual({ 'budget=requests,scope=key': 1, 'budget=tokens,scope=org': 1 });
    expect(counted(series(samples, 'sluice_content_filter_blocks_total'))).toEqual({ 'endpoint=chat': 1, 'endpoint=images': 1 });
    expect(counted(series(samples, 'sluice_upstream_errors_total'))).toEqual({
      'kind=status,upstream=b': 1,
      'kind=connect,upstream=dead': 1,
      'kind=timeout,upstream=slow': 1,
      'kind=stream,upstream=b': 1,
    });
  });

  it('returns the gauges to zero once every request has finished', () => {
    expect(series(samples, 'sluice_inflight_requests')).toEqual({ '': 0 });
    expect(series(samples, 'sluice_active_streams')).toEqual({ '': 0 });
  });

  it('exposes the default process and Node metrics', () => {
    const names = new Set(samples.map((s) => s.name));
    for (const name of ['process_cpu_seconds_total', 'process_start_time_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(names).toContain(name);
    }
  });

  it('passes promtool check metrics', () => {
    const { status, output } = promtoolCheck(exposition);
    expect(output).toBe('');
    expect(status).toBe(0);
  });
});
