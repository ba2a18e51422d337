// Messages streams without buffering, timed, on a translated and a native
// backend: the scripted backend sends its answer (text, then a tool call
// whose arguments come in pieces) one frame every 40 ms; each text piece must
// reach the client as a text_delta, and each argument piece as an
// input_json_delta, within 20 ms of leaving the backend, so the first text is
// out long before the backend is done and a tool call's arguments arrive as
// they are sent, not at the end. Backend, gateway and client share this
// process and its clock, as in stream-timing.test.ts (2 ms for the clock's
// granularity; a pause of this shared machine shows once, hence the retries).
import { READ_QUESTION, READ_TOOL } from '../support/anthropic-round-trip';
import { postSse, type SseEvent } from '../support/http';
import { MODES, startMessagesStack, type MessagesStack } from '../support/messages-stack';

const GAP_MS = 40;
const BOUND_MS = 20 + 2;

jest.retryTimes(2, { logErrorsBeforeRetry: true });

interface Piece { kind: 'text' | 'args'; text: string; at: number }

/** The text and argument pieces a backend frame carries: chat deltas, or Messages' block deltas. */
function backendPieces(frame: string, at: number): Piece[] {
  const data = frame.split('\n').find((line) => line.startsWith('data: '))?.slice(6);
  if (data === undefined || data === '[DONE]') return [];
  return clientPieces({ data, at }).concat(chatPieces(JSON.parse(data), at));
}

function chatPieces(chunk: any, at: number): Piece[] {
  const delta = chunk.choices?.[0]?.delta ?? {};
  const pieces: Piece[] = [];
  if (typeof delta.content === 'string' && delta.content !== '') pieces.push({ kind: 'text', text: delta.content, at });
  for (const call of delta.tool_calls ?? []) if (call.function?.arguments) pieces.push({ kind: 'args', text: call.function.arguments, at });
  return pieces;
}

function clientPieces(event: Pick<SseEvent, 'data' | 'at'>): Piece[] {
  const e = JSON.parse(event.data);
  if (e.type !== 'content_block_delta') return [];
  if (e.delta.type === 'text_delta') return [{ kind: 'text', text: e.delta.text, at: event.at }];
  if (e.delta.type === 'input_json_delta') return [{ kind: 'args', text: e.delta.partial_json, at: event.at }];
  return [];
}

describe.each(MODES)('Messages stream timing, %s backend', (_mode, model) => {
  let stack: MessagesStack;

  beforeAll(async () => {
    stack = await startMessagesStack({ command: 'true', readPath: '/work/project/secret.txt' }, {
      config: { plugins: [{ name: 'content-filter', terms: ['forbidden phrase'] }, { name: 'limits' }] },
      backend: { paceMs: GAP_MS },
    });
  });
  afterAll(() => stack?.close());

  it('delivers each text and argument piece within 20 ms of the backend sending it', async () => {
    const res = await postSse(`${stack.gw.url}/v1/messages`, { model, max_tokens: 1024, stream: true, tools: [READ_TOOL], messages: [READ_QUESTION] }, { 'x-api-key': stack.key });
    expect(res.status).toBe(200);
    const sent = stack.backend.streams.at(-1)!;
    const expected = sent.flatMap(({ frame, at }) => backendPieces(frame, at));
    const got = res.events.flatMap(clientPieces);
    // The same pieces in the same order: none merged, none held back for another.
    expect(got.map(({ kind, text }) => ({ kind, text }))).toEqual(expected.map(({ kind, text }) => ({ kind, text })));
    expect(got.filter((p) => p.kind === 'args').length).toBeGreaterThan(3);
    const delays = got.map((p, i) => p.at - expected[i].at);
    expect(delays.every((d) => d >= 0)).toBe(true);
    expect(delays.filter((d) => d > BOUND_MS)).toEqual([]);
    // The first text is out long before the backend's last frame; the arguments are spread as they were sent.
    const lastSent = sent.at(-1)!.at;
    expect(lastSent - got[0].at).toBeGreaterThan(6 * GAP_MS);
    const args = got.filter((p) => p.kind === 'args');
    expect(args.at(-1)!.at - args[0].at).toBeGreaterThanOrEqual((args.length - 1) * GAP_MS - 10);
  });
});
