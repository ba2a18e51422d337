// The input endpoints traced as chat is: a server span and an attempt span
// per request, named by the endpoint's operation (embeddings in the GenAI
// conventions; rerank, score and moderations by their own names), with the
// model, the input tokens the backend reported and the cost.
import { startInputsBackend, type InputsBackend } from '../support/inputs-backend';
import { startOtlpReceiver, type OtlpReceiver } from '../support/otlp-receiver';
import { CLIENT, SERVER, spawnWith } from '../support/traced-gateway';
import { makeKey } from '../support/gateway';
import { bearer, post } from '../support/http';
import type { GatewayProcess } from '../support/process';

jest.setTimeout(60_000);

const CASES = [
  { endpoint: 'embeddings', body: { model: 'm', input: ['one two', 'three'] }, tokens: 3 },
  { endpoint: 'rerank', body: { model: 'm', query: 'q', documents: ['a b'] }, tokens: 3 },
  { endpoint: 'score', body: { model: 'm', text_1: 'q', text_2: 'a b' }, tokens: 3 },
  { endpoint: 'moderations', body: { model: 'm', input: 'abcdefgh' }, tokens: 2 },
] as const;

describe('traces of the input endpoints', () => {
  const alice = makeKey('alice');
  let backend: InputsBackend;
  let receiver: OtlpReceiver;
  let gw: GatewayProcess;

  beforeAll(async () => {
    backend = await startInputsBackend();
    receiver = await startOtlpReceiver();
    gw = await spawnWith({
      keys: [alice.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [{ model: 'm', upstream: 'b', endpoints: ['embeddings', 'rerank', 'score', 'moderations'] }],
      pricing: [{ model: 'm', input: 1 }],
      telemetry: { traces: { endpoint: receiver.url, scheduledDelayMs: 20 } },
    });
  });
  afterAll(async () => {
    gw?.kill();
    await receiver?.close();
    await backend?.close();
  });

  it.each(CASES)('$endpoint: a server span and an attempt span under its operation, with the usage and cost', async ({ endpoint, body, tokens }) => {
    const requestId = `trace-${endpoint}`;
    expect((await post(`${gw.url}/v1/${endpoint}`, body, { ...bearer(alice.key), 'x-request-id': requestId })).status).toBe(200);
    const server = await receiver.waitFor((s) => s.kind === SERVER && s.attributes['sluice.request_id'] === requestId, `the server span of ${requestId}`);
    expect(server.name).toBe(`POST /v1/${endpoint}`);
    expect(server.attributes).toMatchObject({
      'gen_ai.operation.name': endpoint, 'gen_ai.request.model': 'm', 'gen_ai.usage.input_tokens': tokens, 'gen_ai.usage.output_tokens': 0,
      'sluice.usage.estimated': endpoint === 'moderations', 'sluice.cost': tokens / 1e6,
    });
    const [attempt] = (await receiver.trace(server.traceId, 2)).filter((s) => s.kind === CLIENT);
    expect(attempt.name).toBe(`${endpoint} m`);
    expect(attempt.attributes).toMatchObject({ 'gen_ai.operation.name': endpoint, 'gen_ai.request.model': 'm' });
  });
});
