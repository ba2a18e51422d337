// Fallback models: when the primary cannot answer, the first fallback that
// can does, under its own name; a 4xx never falls back, unless the route
// names the backend's error code (failoverOn), checked at load.
import { startBackend } from '../support/backends';
import { makeKey, startGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';
import { expectError } from '../support/errors';
import { closedPort } from '../support/fleet-servers';

describe('fallback models', () => {
  it('answers from the first fallback that can when the primary cannot, naming the model that answered, and never falls back on a 4xx', async () => {
    const good = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    const dead = await closedPort();
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { primary: { url: dead.url }, backup: { url: good.base } },
      routes: [
        { model: 'big', upstream: 'primary', fallbacks: ['missing-on-this-endpoint', 'small'] },
        { model: 'picky', upstream: 'backup', upstreamModel: 'status-400', fallbacks: ['small'] },
        { model: 'missing-on-this-endpoint', upstream: 'backup', endpoints: ['images'] },
        { model: 'small', upstream: 'backup', upstreamModel: 'ok-small' },
      ],
    });
    try {
      const send = (model: string, stream = false) => post(`${gw.url}/v1/chat/completions`, { model, stream, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
      const json = await send('big');
      expect(json.status).toBe(200);
      expect(json.body.model).toBe('small');
      expect(good.requests.at(-1)!.body.model).toBe('ok-small');
      const streamed = await postSse(`${gw.url}/v1/chat/completions`, { model: 'big', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
      expect(JSON.parse(streamed.events[0].data).model).toBe('small');
      const before = good.requests.length;
      expectError(await send('picky'), 400, 'upstream_rejected', 'temperature', { code: 'upstream_rejected', type: 'invalid_request_error' });
      expect(good.requests.length - before).toBe(1);
    } finally {
      await gw.close();
      await good.close();
    }
  });

  it('refuses a fallback no route serves at load', async () => {
    await expect(startGateway({ upstreams: { b: { url: 'http://127.0.0.1:9/v1' } }, routes: [{ model: 'a', upstream: 'b', fallbacks: ['nowhere'] }] }))
      .rejects.toThrow(/routes\[0\]\.fallbacks\[0\]: no other route serves "nowhere"/);
  });
});

describe('failover on a backend error code', () => {
  it('sends a context-length refusal on to a larger model when the route says so, and passes it on otherwise', async () => {
    const { startOpenAIBackend } = await import('../support/openai-backend');
    const backend = await startOpenAIBackend();
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { o: { url: backend.base } },
      routes: [
        { model: 'small-ctx', upstream: 'o', upstreamModel: 'ctxlen-small', fallbacks: ['big-ctx'], failoverOn: ['context_length_exceeded'] },
        { model: 'plain-small', upstream: 'o', upstreamModel: 'ctxlen-small', fallbacks: ['big-ctx'] },
        { model: 'big-ctx', upstream: 'o' },
      ],
    });
    const send = (model: string) => post(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'a long prompt' }] }, bearer(alice.key));
    try {
      const moved = await send('small-ctx');
      expect(moved.status).toBe(200);
      expect(moved.body.model).toBe('big-ctx');
      const kept = await send('plain-small');
      expectError(kept, 400, 'upstream_rejected', 'messages', { code: 'context_length_exceeded', type: 'invalid_request_error' });
      expect(kept.body.error.message).toContain('maximum context length');
      await expect(startGateway({ upstreams: { o: { url: backend.base } }, routes: [{ model: 'a', upstream: 'o', fallbacks: ['b'], failoverOn: ['content_policy_violation'] }, { model: 'b', upstream: 'o' }] }))
        .rejects.toThrow(/routes\[0\]\.failoverOn\[0\]: "content_policy_violation" is a content-policy refusal/);
    } finally {
      await gw.close();
      await backend.close();
    }
  });
});
