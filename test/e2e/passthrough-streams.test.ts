// Pass-through routes as streams and under faults: an answer relayed as it
// arrives, the backend given up on when the client leaves, a dead, silent or
// broken backend answered as an error, and requests queued for one socket.
import { request } from 'node:http';
import { SPEECH_EVENTS, type RawBackend } from '../support/raw-backend';
import type { TestGateway } from '../support/gateway';
import { bearer, call } from '../support/http';
import { expectError } from '../support/errors';
import { parseExposition, scrape, series } from '../support/metrics';
import { alice, JSON_TYPE, passthroughSuite } from '../support/passthrough-stack';

describe('pass-through routes', () => {
  let backend: RawBackend;
  let gw: TestGateway;
  const { reached, accessLine } = passthroughSuite((s) => { ({ backend, gw } = s); });

  it('relays a streamed answer as it arrives, not when the backend has finished', async () => {
    const endedBefore = backend.streamsEnded;
    const { first, endedAtFirst, text, headers } = await new Promise<{ first: string; endedAtFirst: boolean; text: string; headers: Record<string, unknown> }>((resolve, reject) => {
      const req = request(`${gw.url}/v1/audio/speech`, { method: 'POST', headers: { ...JSON_TYPE, ...bearer(alice.key) } }, (res) => {
        let all = '';
        let first: string | undefined;
        let endedAtFirst = true;
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (first === undefined) {
            first = c;
            endedAtFirst = backend.streamsEnded > endedBefore;
            backend.release(); // only now may the backend go on
          }
          all += c;
        });
        res.on('end', () => resolve({ first: first!, endedAtFirst, text: all, headers: res.headers }));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'whisper-1', input: 'Hello', voice: 'alloy' }));
    });
    expect(first).toBe(SPEECH_EVENTS[0]);
    expect(endedAtFirst).toBe(false);
    expect(text).toBe(SPEECH_EVENTS.join(''));
    expect(headers['content-type']).toBe('text/event-stream');
    expect(reached()[0].url).toBe('/base/v1/audio/speech');
  });

  it('gives up on the backend when the client leaves mid-stream, and finishes the request once', async () => {
    const aborted = backend.nextAbort();
    await new Promise<void>((resolve, reject) => {
      const req = request(`${gw.url}/v1/audio/speech`, { method: 'POST', headers: { ...JSON_TYPE, ...bearer(alice.key), 'x-request-id': 'pt-left' } }, (res) => {
        res.once('data', () => { req.destroy(); resolve(); });
      });
      req.on('error', () => undefined);
      req.on('close', resolve);
      req.end('{"model":"whisper-1"}');
      setTimeout(() => reject(new Error('no first chunk')), 5000).unref();
    });
    await aborted; // the backend saw its connection closed, with its stream still held
    const line = await accessLine('pt-left');
    expect(line).toMatchObject({ endpoint: 'passthrough', status: 499, reason: 'client_closed', stream: true });
    const samples = parseExposition((await scrape(gw.metrics!.url)).text);
    expect(series(samples, 'sluice_active_streams')).toEqual({ '': 0 });
  });

  it('gives up on the backend at once when the client leaves before the answer', async () => {
    const arrived = backend.nextRequest();
    const aborted = backend.nextAbort();
    const req = request(`${gw.url}/v1/audio/silent`, { method: 'POST', headers: { ...JSON_TYPE, ...bearer(alice.key), 'x-request-id': 'pt-gone' } });
    req.on('error', () => undefined);
    req.end('{"model":"whisper-1"}');
    await arrived;
    req.destroy();
    await aborted; // long before the upstream's timeoutMs (60 s)
    expect(await accessLine('pt-gone')).toMatchObject({ status: 499, reason: 'client_closed' });
  });

  it('answers a dead backend with 502 and a silent one with 504, as error objects', async () => {
    expectError(await call('POST', `${gw.url}/v1/rerank`, '{"query":"q"}', { ...JSON_TYPE, ...bearer(alice.key) }), 502, 'upstream_error');
    expectError(await call('POST', `${gw.url}/v1/quiet/silent`, '{}', { ...JSON_TYPE, ...bearer(alice.key) }), 504, 'upstream_timeout');
  });

  it('cuts the connection when the backend breaks off an answer already under way', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const req = request(`${gw.url}/v1/audio/break`, { method: 'POST', headers: { ...JSON_TYPE, ...bearer(alice.key) } }, (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve('ended'));
        res.on('error', () => resolve('cut'));
        res.on('aborted', () => resolve('cut'));
      });
      req.on('error', () => resolve('cut'));
      req.end('{}');
    });
    expect(outcome).toBe('cut');
  });

  it('queues for a connection without losing a body (maxSockets 1)', async () => {
    const bodies = [1, 2, 3].map((i) => JSON.stringify({ model: 'emb-small', input: `text ${i}`, pad: ' '.repeat(i) }));
    const answers = await Promise.all(bodies.map((b) => call('POST', `${gw.url}/v1/narrow/slow`, b, { ...JSON_TYPE, ...bearer(alice.key) })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(reached().map((r) => r.body.toString('utf8')).sort()).toEqual([...bodies].sort());
  });
});
