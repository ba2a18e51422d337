// A dollar budget holds on transcriptions across two replicas sharing the real
// Redis: 30 concurrent uploads of a WAV file, alternating replicas, each
// reserving the file's seconds (its RIFF header's) at the price per minute,
// and settling the seconds the backend reported. What the backend says it
// transcribed never costs past the budget, and the budget's count ends equal
// to it.
import { sineWav, startAudioBackend, type AudioBackend } from '../support/audio-backend';
import { makeKey } from '../support/gateway';
import { startSharedReplicas, type SharedReplicas } from '../support/replicas';
import { bearer, call } from '../support/http';
import { until } from '../support/wait';

jest.setTimeout(120_000);

// $60 a minute: a dollar a second of audio. Each upload is a quarter second; the budget holds $2: eight of them.
const BUDGET_DOLLARS = 2;
const WAV = sineWav(250);
const usd = makeKey('audio-usd', { limits: { dollars: BUDGET_DOLLARS, dollarWindow: 'day' } });
const BOUNDARY = 'budget-boundary';
const BODY = Buffer.concat([
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="q.wav"\r\nContent-Type: audio/wav\r\n\r\n`),
  WAV,
  Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
]);

describe('a dollar budget on transcriptions across two replicas', () => {
  let backend: AudioBackend;
  let stack: SharedReplicas;

  beforeAll(async () => {
    backend = await startAudioBackend();
    stack = await startSharedReplicas({
      keys: [usd.entry],
      pricing: [{ model: 'whisper', audioMinute: 60 }],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: 'whisper', upstream: 'b', endpoints: ['transcriptions'] }],
      plugins: [{ name: 'rate-limit' }],
    });
  });
  afterAll(async () => {
    await stack?.close();
    await backend?.close();
  });

  it('30 concurrent uploads never spend past the budget, and it settles to the seconds transcribed', async () => {
    const headers = { ...bearer(usd.key), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => call('POST', `${stack.replicas[i % 2].url}/v1/audio/transcriptions`, BODY, headers, true)));
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    const admitted = results.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThan(30);
    const served = backend.requests.filter((r) => r.path === '/v1/audio/transcriptions');
    expect(served).toHaveLength(admitted);
    for (const s of served) expect(s.seconds).toBeCloseTo(0.25, 9);
    const spentNanos = served.reduce((n, s) => n + Math.round(s.seconds! * 1e9), 0);
    expect(spentNanos).toBeLessThanOrEqual(BUDGET_DOLLARS * 1e9);
    const counter = `${stack.prefix}{key:audio-usd}:dollars:${new Date().toISOString().slice(0, 10)}`;
    await until(async () => Number(await stack.redis.get(counter)) === spentNanos, 'the dollar budget settled to what was spent', 20_000);
  });
});
