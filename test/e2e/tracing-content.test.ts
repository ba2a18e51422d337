// What an exported span may say of a request's text and its key, end to end
// (a gateway process, a real OTLP receiver): with captureContent off, no
// prompt and no completion in any span, in every protocol, streamed or not;
// with it on, the input as the transform stage left it (the pii plugin's
// redaction), never as the client wrote it; and, either way, never the API
// key, however the client sent it.
import { makeKey } from '../support/gateway';
import { bearer, post } from '../support/http';
import type { ReceivedSpan } from '../support/otlp-receiver';
import { SERVER, TRACE_PROTOCOLS as PROTOCOLS, tracedSetup, type TracedSetup } from '../support/traced-gateway';

const SECRET = 'a prompt nobody may read';
/** The test backend's answer is made of these words (alpha beta, for two events). */
const ANSWER_WORD = 'alpha';
const EMAIL = 'carol@example.com';
const CONTENT_KEYS = ['gen_ai.input.messages', 'gen_ai.output.messages'];

/** The spans of every trace whose server span names one of these request ids, once each server span arrived. */
async function spansOf(t: TracedSetup, requestIds: readonly string[]): Promise<ReceivedSpan[]> {
  const traceIds = await Promise.all(requestIds.map((id) =>
    t.receiver.waitFor((s) => s.kind === SERVER && s.attributes['sluice.request_id'] === id, `the server span of ${id}`).then((s) => s.traceId)));
  return t.receiver.spans.filter((s) => traceIds.includes(s.traceId));
}

/** Each protocol, streamed and as JSON, with this prompt: the request ids sent. */
async function sendEach(t: TracedSetup, headers: Record<string, string>, text: string, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (const p of PROTOCOLS) {
    for (const stream of [true, false]) {
      const id = `${tag}-${p.name}-${stream ? 'stream' : 'json'}`;
      const res = await post(`${t.gw.url}${p.path}`, { ...p.body('ok-1', text), stream }, { ...headers, 'x-request-id': id });
      expect(res.status).toBe(200);
      ids.push(id);
    }
  }
  return ids;
}

describe('captureContent off', () => {
  const alice = makeKey('alice');
  let t: TracedSetup;

  beforeAll(async () => { t = await tracedSetup(alice, {}); });
  afterAll(() => t.close());

  it('no prompt and no completion in any span, and no key, in any protocol, streamed or not', async () => {
    const ids = await sendEach(t, bearer(alice.key), SECRET, 'plain');
    const spans = await spansOf(t, ids);
    // A server span and an attempt span per request: the whole trace is read.
    expect(spans.length).toBeGreaterThanOrEqual(ids.length * 2);
    for (const s of spans) for (const key of CONTENT_KEYS) expect(s.attributes[key]).toBeUndefined();
    const exported = JSON.stringify(spans);
    expect(exported).not.toContain(SECRET);
    expect(exported).not.toContain(ANSWER_WORD);
    expect(exported).not.toContain(alice.key);
  });
});

describe('captureContent on, with a transform-stage redaction', () => {
  const alice = makeKey('alice');
  let t: TracedSetup;

  beforeAll(async () => {
    t = await tracedSetup(alice, { captureContent: true }, {}, { plugins: [{ name: 'pii', input: 'redact' }, { name: 'content-filter', terms: ['forbidden phrase'] }] });
  });
  afterAll(() => t.close());

  it.each(PROTOCOLS)('$name: the captured input is the redacted text, never the value the client sent', async (p) => {
    const id = `redacted-${p.name}`;
    const res = await post(`${t.gw.url}${p.path}`, p.body('ok-1', `Mail ${EMAIL} today.`), { ...bearer(alice.key), 'x-request-id': id });
    expect(res.status).toBe(200);
    // The backend got the redacted text: the redaction ran.
    expect(JSON.stringify(t.backend.requests.at(-1)!.body)).toContain('Mail [EMAIL_1] today.');
    const spans = await spansOf(t, [id]);
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(JSON.parse(String(server.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Mail [EMAIL_1] today.' }] }]);
    // The output is captured too: content capture is on and did its work.
    expect(String(server.attributes['gen_ai.output.messages'])).toContain(ANSWER_WORD);
    expect(JSON.stringify(spans)).not.toContain(EMAIL);
  });

  it('no span carries the API key: sent as a bearer token, as x-api-key, refused, or wrong', async () => {
    const wrong = makeKey('nobody').key;
    const ids = await sendEach(t, bearer(alice.key), 'hello', 'bearer');
    const more: Array<{ id: string; path: string; body: object; headers: Record<string, string>; status: number }> = [
      { id: 'x-api-key', path: '/v1/messages', body: PROTOCOLS[2].body('ok-1'), headers: { 'x-api-key': alice.key }, status: 200 },
      { id: 'filtered', path: '/v1/chat/completions', body: PROTOCOLS[0].body('ok-1', 'a forbidden phrase'), headers: bearer(alice.key), status: 400 },
      { id: 'wrong-key', path: '/v1/chat/completions', body: PROTOCOLS[0].body('ok-1'), headers: bearer(wrong), status: 401 },
    ];
    for (const m of more) {
      const res = await post(`${t.gw.url}${m.path}`, m.body, { ...m.headers, 'x-request-id': m.id });
      expect({ id: m.id, status: res.status }).toEqual({ id: m.id, status: m.status });
      ids.push(m.id);
    }
    const spans = await spansOf(t, ids);
    expect(spans.find((s) => s.attributes['sluice.request_id'] === 'wrong-key')!.attributes['http.response.status_code']).toBe(401);
    // Every exported span of this gateway: attributes, events, status messages and the resource.
    const exported = JSON.stringify(t.receiver.spans);
    expect(exported).not.toContain(alice.key);
    expect(exported).not.toContain(wrong);
    // Nor any part long enough to find it by: the random half of each key.
    expect(exported).not.toContain(alice.key.slice(-16));
    expect(exported).not.toContain(wrong.slice(-16));
  });
});
