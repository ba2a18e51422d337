import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';

describe('smoke: openai-format backend through the gateway', () => {
  let backend: Backend;
  let gw: TestGateway;
  const alice = makeKey('alice');

  beforeAll(async () => {
    backend = await startBackend({ format: 'openai', events: 5, gapMs: 20 });
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: { b: { url: backend.base, format: 'openai', headers: { authorization: 'Bearer upstream-secret' } } },
      routes: [{ model: '*', upstream: 'b' }],
    });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  it('answers a JSON chat completion in the interface shape', async () => {
    const res = await post(`${gw.url}/v1/chat/completions`, { model: 'ok-a', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 }, bearer(alice.key));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'chat.completion', model: 'ok-a', usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 } });
    const sent = backend.requests.at(-1)!;
    expect(sent.body.temperature).toBe(0.2);
    expect(sent.headers.authorization).toBe('Bearer upstream-secret');
  });

  it('streams chunks with the final usage chunk folded in', async () => {
    const res = await postSse(`${gw.url}/v2/chat/completions`, { model: 'ok-b', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
    expect(res.status).toBe(200);
    const data = res.events.map((e) => e.data);
    expect(data.at(-1)).toBe('[DONE]');
    const last = JSON.parse(data.at(-2)!);
    expect(last).toMatchObject({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { total_tokens: 16 } });
    expect(JSON.parse(data[0]).choices[0].delta.role).toBe('assistant');
  });
});
