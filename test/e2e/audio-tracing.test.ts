// Audio traced as chat is: a server span and an attempt span per request,
// named by the endpoint's operation (transcriptions, translations, speech),
// with the model and the cost of its seconds or characters.
import { sineWav, startAudioBackend, type AudioBackend } from '../support/audio-backend';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { CLIENT, SERVER, spawnWith } from '../support/traced-gateway';
import { makeKey } from '../support/gateway';
import { bearer, call, post } from '../support/http';
import type { GatewayProcess } from '../support/process';

jest.setTimeout(60_000);

const BOUNDARY = 'trace-boundary';
const UPLOAD = Buffer.concat([
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nm\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="t.wav"\r\n\r\n`),
  sineWav(500),
  Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
]);
// $60 a minute (a dollar a second), $1 per million characters.
const CASES = [
  { endpoint: 'transcriptions', path: '/v1/audio/transcriptions', cost: 0.5 },
  { endpoint: 'translations', path: '/v1/audio/translations', cost: 0.5 },
  { endpoint: 'speech', path: '/v1/audio/speech', cost: 10 / 1e6 },
] as const;

describe('traces of the audio endpoints', () => {
  const alice = makeKey('alice');
  let backend: AudioBackend;
  let receiver: OtlpReceiver;
  let gw: GatewayProcess;

  beforeAll(async () => {
    backend = await startAudioBackend();
    receiver = await startOtlpReceiver();
    gw = await spawnWith({
      keys: [alice.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: 'm', upstream: 'b', endpoints: ['transcriptions', 'translations', 'speech'] }],
      pricing: [{ model: 'm', audioMinute: 60, characters: 1 }],
      telemetry: { traces: { endpoint: receiver.url, scheduledDelayMs: 20 } },
    });
  });
  afterAll(async () => {
    gw?.kill();
    await receiver?.close();
    await backend?.close();
  });

  it.each(CASES)('$endpoint: a server span and an attempt span under its operation, with the cost', async ({ endpoint, path, cost }) => {
    const requestId = `trace-${endpoint}`;
    const headers = { ...bearer(alice.key), 'x-request-id': requestId };
    const res = endpoint === 'speech'
      ? await post(`${gw.url}${path}`, { model: 'm', voice: 'alloy', input: 'ten chars!' }, headers)
      : await call('POST', `${gw.url}${path}`, UPLOAD, { ...headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` });
    expect(res.status).toBe(200);
    const server = await receiver.waitFor((s) => s.kind === SERVER && s.attributes['sluice.request_id'] === requestId, `the server span of ${requestId}`);
    expect(server.name).toBe(`POST ${path}`);
    expect(server.attributes).toMatchObject({ 'gen_ai.operation.name': endpoint, 'gen_ai.request.model': 'm', 'sluice.usage.estimated': false });
    expect(server.attributes['sluice.cost']).toBeCloseTo(cost, 9);
    const [attempt] = (await receiver.trace(server.traceId, 2)).filter((s) => s.kind === CLIENT);
    expect(attempt.name).toBe(`${endpoint} m`);
    expect(attempt.attributes).toMatchObject({ 'gen_ai.operation.name': endpoint, 'gen_ai.request.model': 'm' });
  });
});
