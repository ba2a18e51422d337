// Streaming the Responses API without buffering, timed: the backend paces its
// tokens GAP_MS apart, and each response.output_text.delta must reach the
// client as the token that carries it leaves the backend: the typical one
// within two milliseconds, the first within FIRST_MS, none later than the chat
// stream's bound (stream-timing.test.ts), the first long before the backend
// has finished. An unpaced stream per path and a JSON request to the paced
// backend go first, so the timed streams measure the relay, not the first
// compile of its code or the opening of a connection.
// Backend, gateway and client share this process and its clock (Date.now(),
// 1 ms steps); a pause of this shared, busy machine shows once, hence the retries.
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse, type SseEvent } from '../support/http';
import { startResponsesBackend, type ResponsesBackend } from '../support/responses-backend';

const EVENTS = 10;
const GAP_MS = 100;
const TYPICAL_MS = 2;
// A millisecond or two, and the clock's 1 ms step.
const FIRST_MS = 3;
const BOUND_MS = 20 + 2;

jest.retryTimes(2, { logErrorsBeforeRetry: true });

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Checks the delay from each token's send to its delta's arrival, and that the first came long before the end. */
function expectPromptDeltas(sent: number[], events: SseEvent[], streamEnd: number): void {
  const deltas = events.filter((e) => e.event === 'response.output_text.delta');
  expect(deltas).toHaveLength(sent.length);
  const delays = sent.map((at, i) => deltas[i].at - at);
  expect(delays.every((d) => d >= 0)).toBe(true);
  expect(delays[0]).toBeLessThanOrEqual(FIRST_MS);
  expect(median(delays)).toBeLessThanOrEqual(TYPICAL_MS);
  expect(delays.filter((d) => d > BOUND_MS)).toEqual([]);
  // The first delta arrived while the backend still had most of its tokens to send.
  expect(streamEnd - deltas[0].at).toBeGreaterThanOrEqual(4 * GAP_MS);
}

describe('Responses stream timing', () => {
  let chat: Backend;
  let unpaced: Backend;
  let native: ResponsesBackend;
  let gw: TestGateway;
  const alice = makeKey('alice');

  beforeAll(async () => {
    chat = await startBackend({ format: 'openai', events: EVENTS, gapMs: GAP_MS });
    unpaced = await startBackend({ format: 'openai', events: EVENTS, gapMs: 0 });
    native = await startResponsesBackend({ gapMs: GAP_MS });
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: {
        chat: { url: chat.base, format: 'openai' },
        unpaced: { url: unpaced.base, format: 'openai' },
        native: { url: native.base, format: 'openai', apis: ['chat', 'responses'] },
      },
      routes: [{ model: '*-native', upstream: 'native' }, { model: 'warm-up', upstream: 'unpaced' }, { model: '*', upstream: 'chat' }],
      plugins: [{ name: 'content-filter', terms: ['forbidden phrase'] }, { name: 'limits' }],
    });
    for (const model of ['warm-up', 'fast-native']) expect((await stream(model)).events.at(-1)!.event).toBe('response.completed');
    // A JSON answer opens the connection to the paced backend.
    expect((await post(`${gw.url}/v1/responses`, { model: 'ok-warm', input: 'hi' }, bearer(alice.key))).status).toBe(200);
  });
  afterAll(async () => { await gw.close(); await chat.close(); await unpaced.close(); await native.close(); });

  function stream(model: string) {
    return postSse(`${gw.url}/v1/responses`, { model, stream: true, input: 'hi' }, bearer(alice.key));
  }

  it('translated from a chat backend: each token\'s delta goes out as the chunk arrives', async () => {
    const res = await stream('ok-timed');
    expect(res.status).toBe(200);
    expect(res.events.at(-1)!.event).toBe('response.completed');
    // Each content chunk of the backend becomes one delta.
    const sent = chat.sentAt.at(-1)!.slice(0, EVENTS);
    expectPromptDeltas(sent, res.events, chat.sentAt.at(-1)!.at(-1)!);
  });

  it('relayed from a native backend: each delta event goes out as it arrives', async () => {
    const res = await stream('slow-native');
    expect(res.status).toBe(200);
    expect(res.events.at(-1)!.event).toBe('response.completed');
    const frames = native.sent.at(-1)!;
    const sent = frames.filter((f) => f.type === 'response.output_text.delta').map((f) => f.at);
    expect(sent.length).toBeGreaterThan(2);
    expectPromptDeltas(sent, res.events, frames.at(-1)!.at);
  });
});
