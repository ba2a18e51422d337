// What a request cost, returned to the client: a JSON answer's
// x-sluice-cost header, and a stream's trailer for a client that asks for
// trailers (TE: trailers); the same figure the usage record keeps. A model no
// price names gets no header; a config without prices adds nothing at all.
import { request } from 'node:http';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post } from '../support/http';
import { makeAdminKey } from '../support/admin';
import { exported } from '../support/spend';
import { until } from '../support/wait';

const chat = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'price this answer' }] });

/** A streamed request read to its end with node:http, which hands over the trailers. */
function streamWithTrailers(url: string, key: string, te: boolean): Promise<{ headers: Record<string, unknown>; trailers: Record<string, string | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(key), ...(te && { te: 'trailers' }) } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => resolve({ headers: res.headers, trailers: res.trailers, body }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(chat('ok-a', true)));
  });
}

describe('the cost of a request, to its client', () => {
  const adminKey = makeAdminKey();
  const alice = makeKey('alice');
  let backend: Backend;
  let priced: TestGateway;
  let unpriced: TestGateway;

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 4, gapMs: 2 });
    const config = {
      admin: { keys: [adminKey.digest] },
      keys: [alice.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
    };
    priced = await startGateway({ ...config, pricing: [{ model: 'ok-*', input: 1.25, output: 3.7 }] }, { admin: true });
    unpriced = await startGateway(config);
  });
  afterAll(async () => {
    await Promise.all([priced?.close(), unpriced?.close()]);
    await backend?.close();
  });

  it('a JSON answer carries its cost, as the usage record has it', async () => {
    const res = await post(`${priced.url}/v1/chat/completions`, chat('ok-a'), { ...bearer(alice.key), 'x-request-id': 'cost-json' });
    expect(res.status).toBe(200);
    const header = res.headers['x-sluice-cost'] as string;
    expect(header).toMatch(/^0\.\d{1,9}$/);
    const { prompt_tokens, completion_tokens } = res.body.usage;
    expect(Number(header)).toBeCloseTo((prompt_tokens * 1.25 + completion_tokens * 3.7) / 1e6, 9);
    await until(async () => (await exported(priced.admin!.url, adminKey.key, 'jsonl')).some((r) => r.request_id === 'cost-json'), 'the usage record');
    const record = (await exported(priced.admin!.url, adminKey.key, 'jsonl')).find((r) => r.request_id === 'cost-json')!;
    expect(record.cost).toBe(Number(header));
  });

  it('a stream announces the cost trailer and sends it after the last event when the client asks for trailers', async () => {
    const asked = await streamWithTrailers(priced.url, alice.key, true);
    expect(asked.headers.trailer).toBe('x-sluice-cost');
    expect(asked.body).toContain('data: [DONE]');
    expect(asked.trailers['x-sluice-cost']).toMatch(/^0\.\d{1,9}$/);
    const plain = await streamWithTrailers(priced.url, alice.key, false);
    expect(plain.headers.trailer).toBeUndefined();
    expect(plain.trailers['x-sluice-cost']).toBeUndefined();
  });

  it('names no cost for a model no price names, nor on a gateway without prices', async () => {
    const other = await post(`${priced.url}/v1/chat/completions`, chat('unpriced-model'), bearer(alice.key));
    expect(other.status).toBe(200);
    expect(other.headers['x-sluice-cost']).toBeUndefined();
    const none = await post(`${unpriced.url}/v1/chat/completions`, chat('ok-a'), bearer(alice.key));
    expect(none.headers['x-sluice-cost']).toBeUndefined();
    expect((await streamWithTrailers(unpriced.url, alice.key, true)).headers.trailer).toBeUndefined();
  });
});
