// A stream's first event behind a fleet: an error event, or no event within
// firstEventMs (pings do not count), sends the request to another endpoint,
// since nothing has reached the client yet; alone, the timeout is the answer.
import { startBackend } from '../support/backends';
import { makeKey, startGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';
import { expectError } from '../support/errors';
import { serve } from '../support/fleet-servers';

describe('a stream whose first event is an error', () => {
  it('goes to another endpoint, since nothing reached the client yet', async () => {
    let errorsSent = 0;
    const erring = await serve((_req, res) => {
      errorsSent++;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ error: { message: 'engine overloaded' } })}\n\n`);
    });
    const good = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { f: { endpoints: [{ url: erring.url }, { url: good.base }], picker: 'round_robin' } },
      routes: [{ model: '*', upstream: 'f' }],
    });
    try {
      const res = await postSse(`${gw.url}/v1/chat/completions`, { model: 'ok-a', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
      expect(errorsSent).toBe(1);
      expect(res.status).toBe(200);
      expect(res.events.at(-1)!.data).toBe('[DONE]');
      expect(res.raw).not.toContain('overloaded');
    } finally {
      await gw.close();
      await good.close();
      await erring.close();
    }
  });
});

describe('timeouts that tell silence from slowness', () => {
  it('gives up on a stream whose first event does not come (pings do not count) and tries another endpoint', async () => {
    const silent = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const ping = setInterval(() => res.write(': ping\n\n'), 20);
      res.on('close', () => clearInterval(ping));
    });
    const silentUrl = silent.url;
    const good = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: {
        f: { endpoints: [{ url: silentUrl }, { url: good.base }], picker: 'round_robin', timeouts: { firstEventMs: 150 } },
        alone: { url: silentUrl, timeouts: { firstEventMs: 150 } },
      },
      routes: [{ model: 'alone', upstream: 'alone' }, { model: '*', upstream: 'f' }],
    });
    const body = (model: string) => ({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    try {
      const started = Date.now();
      const res = await postSse(`${gw.url}/v1/chat/completions`, body('ok-a'), bearer(alice.key));
      expect(res.events.at(-1)!.data).toBe('[DONE]');
      expect(Date.now() - started).toBeLessThan(1000);
      // Alone, the timeout is the answer; nothing had reached the client, so it is an error response, not an event.
      expectError(await post(`${gw.url}/v1/chat/completions`, body('alone'), bearer(alice.key)), 504, 'upstream_timeout', null);
    } finally {
      await gw.close();
      await good.close();
      await silent.close();
    }
  });
});
