// A translated Messages stream whose backend goes silent gets Anthropic's
// `ping` event every server.streamPingMs (here 100 ms instead of the default
// 10 s), so proxies and clients with idle timeouts keep the stream; pings
// stop once the backend speaks again, and never come while it streams.
// (Anthropic's SDK skips ping events, so the stream is read here as it comes.)
import { startGatedBackend, type GatedBackend } from '../support/gated-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { postSse } from '../support/http';

const PING_MS = 100;

describe('pings on a silent Messages stream', () => {
  let backend: GatedBackend;
  let gw: TestGateway;
  const key = makeKey('pinged');

  beforeAll(async () => {
    backend = await startGatedBackend({ events: 5, gapMs: 20 });
    gw = await startGateway({
      server: { streamPingMs: PING_MS },
      keys: [key.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'b' }],
    });
  });
  afterAll(async () => { backend?.release(); await gw?.close(); await backend?.close(); });

  it('sends a ping after each silence of streamPingMs, and none once the backend speaks again', async () => {
    // hold-*: the backend sends its first chunk, then waits for release(), then finishes.
    let pings = 0;
    const res = await postSse(`${gw.url}/v1/messages`, { model: 'hold-a', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Hi' }] }, { 'x-api-key': key.key }, undefined, false, (event) => {
      if (event.event === 'ping' && ++pings === 2) backend.release();
    });
    const types = res.events.map((e) => e.event);
    expect(types).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'ping', 'ping', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(res.events.map((e) => JSON.parse(e.data).type)).toEqual(types);
    // Each ping came after at least streamPingMs of silence.
    const at = res.events.map((e) => e.at);
    expect(at[3] - at[2]).toBeGreaterThanOrEqual(PING_MS - 5);
    expect(at[4] - at[3]).toBeGreaterThanOrEqual(PING_MS - 5);
  });

  it('sends none while the backend streams', async () => {
    // stream-*: five chunks 20 ms apart, well inside streamPingMs.
    const res = await postSse(`${gw.url}/v1/messages`, { model: 'stream-a', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Hi' }] }, { 'x-api-key': key.key });
    expect(res.events.at(-1)!.event).toBe('message_stop');
    expect(res.events.filter((e) => e.event === 'content_block_delta')).toHaveLength(5);
    expect(res.events.filter((e) => e.event === 'ping')).toEqual([]);
  });
});
