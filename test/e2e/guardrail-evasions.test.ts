// Guardrails read text as a reader sees it, in every client protocol and
// backend kind: an accent (composed or combining) or a blank character
// (braille blank) inside a term hides it from neither the content filter on
// requests nor its output rules on answers, nor a phone number or an address
// from the PII plugin; `accents: exact` keeps accented letters apart; object
// keys (metadata, a tool call's input) are redacted like values; JSON escapes
// in a string that holds JSON (tool arguments, tool results) hide nothing,
// and a redaction there leaves JSON the backend parses.
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call } from '../support/http';
import { startSplitBackend, type SplitBackend } from '../support/split-backend';

interface Route { name: string; path: string; model: string; text(t: string): object; json(arguments_: string): object }

// The same request in each protocol: a text, or a tool call whose arguments (a string holding JSON) are given.
const ROUTES: Route[] = [
  {
    name: 'chat', path: '/v1/chat/completions', model: 'chat-json',
    text: (t) => ({ messages: [{ role: 'user', content: t }] }),
    json: (a) => ({ messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: a } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'done' },
    ] }),
  },
  ...['rt-json', 'rn-json'].map((model): Route => ({
    name: `responses (${model.startsWith('rt') ? 'through chat' : 'native'})`, path: '/v1/responses', model,
    text: (t) => ({ input: t }),
    json: (a) => ({ input: [
      { type: 'message', role: 'user', content: 'hi' },
      { type: 'function_call', call_id: 'call_1', name: 'look', arguments: a },
      { type: 'function_call_output', call_id: 'call_1', output: 'done' },
    ] }),
  })),
  ...['mt-json', 'mn-json'].map((model): Route => ({
    name: `messages (${model.startsWith('mt') ? 'through chat' : 'native'})`, path: '/v1/messages', model,
    text: (t) => ({ max_tokens: 50, messages: [{ role: 'user', content: t }] }),
    json: (a) => ({ max_tokens: 50, messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'look', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: a }] },
    ] }),
  })),
];

const UPSTREAMS = (base: string) => ({ chat: { url: base, format: 'openai' }, resp: { url: base, apis: ['responses'] }, msg: { url: base, apis: ['messages'] } });
const MODEL_ROUTES = [
  { model: 'chat-*', upstream: 'chat', dialect: 'openai' }, { model: 'rt-*', upstream: 'chat', dialect: 'openai' }, { model: 'rn-*', upstream: 'resp' },
  { model: 'mt-*', upstream: 'chat', dialect: 'openai' }, { model: 'mn-*', upstream: 'msg' },
];

/** Every string in a body that is itself JSON, parsed: a backend must be able to read each. */
function jsonStrings(value: unknown, out: unknown[] = []): unknown[] {
  if (typeof value === 'string' && /^\s*[{[]/.test(value)) out.push(JSON.parse(value));
  else if (Array.isArray(value)) for (const v of value) jsonStrings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) jsonStrings(v, out);
  return out;
}

describe('guardrails against hidden text', () => {
  const alice = makeKey('alice');
  let backend: SplitBackend;
  let filtered: TestGateway;
  let exact: TestGateway;
  let pii: TestGateway;
  let piiBackend: SplitBackend;
  let piiAnswers: TestGateway;

  const start = (plugins: object[]) => startGateway({ keys: [alice.entry], upstreams: UPSTREAMS(backend.base), routes: MODEL_ROUTES, plugins });

  beforeAll(async () => {
    backend = await startSplitBackend('Your cre\u0301dit card and the project\u2800bluebird, then cr\u00e9dit card.');
    filtered = await start([{ name: 'content-filter', terms: ['credit card', 'project bluebird'], output: { terms: ['credit card', 'project bluebird'], action: 'mask' } }]);
    exact = await start([{ name: 'content-filter', terms: ['p\u00eacheur'], accents: 'exact' }]);
    pii = await start([{ name: 'pii' }]);
    piiBackend = await startSplitBackend('Call +1 415\u2800555\u28002671 or mail bo\u0301b@exa\u0301mple.com today.');
    piiAnswers = await startGateway({ keys: [alice.entry], upstreams: UPSTREAMS(piiBackend.base), routes: MODEL_ROUTES, plugins: [{ name: 'pii' }] });
  });
  afterAll(async () => {
    await Promise.all([filtered.close(), exact.close(), pii.close(), piiAnswers.close()]);
    await Promise.all([backend.close(), piiBackend.close()]);
  });

  const send = (gw: TestGateway, r: Route, body: object) =>
    call('POST', `${gw.url}${r.path}`, JSON.stringify({ model: r.model, ...body }), { 'content-type': 'application/json', ...bearer(alice.key) });
  const lastBody = (): unknown => backend.requests.at(-1)!.body;

  describe.each(ROUTES)('$name', (r) => {
    it.each([
      ['a combining accent', 'my cre\u0301dit card'],
      ['a composed accent', 'my cr\u00e9dit c\u00e1rd'],
      ['a braille blank for a space', 'about project\u2800bluebird'],
      ['a braille blank inside a word', 'about pro\u2800ject blue\u2800bird'],
    ])('refuses a term hidden by %s', async (_how, text) => {
      const sent = backend.requests.length;
      const res = await send(filtered, r, r.text(text));
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/content_filter/);
      expect(backend.requests.length).toBe(sent);
    });

    it.each(['json', 'split10'])('masks accented and blank-split terms in the answer (%s)', async (kind) => {
      const res = await send(filtered, { ...r, model: r.model.replace('json', kind) }, { ...r.text('Tell me.'), stream: kind !== 'json' });
      expect(res.status).toBe(200);
      expect(res.text).toContain('[redacted]');
      expect(res.text).not.toMatch(/dit card|bluebird/);
    });

    it.each(['json', 'split10'])('masks a phone number and an address hidden by braille blanks and accents in the answer (%s)', async (kind) => {
      const res = await send(piiAnswers, { ...r, model: r.model.replace('json', kind) }, { ...r.text('Who?'), stream: kind !== 'json' });
      expect(res.status).toBe(200);
      expect(res.text).toContain('[PHONE]');
      expect(res.text).toContain('[EMAIL]');
      // Generated ids aside (random characters may spell 2671).
      expect(res.text.replace(/(?:resp|msg|chatcmpl)_[0-9A-Za-z]+/g, '')).not.toMatch(/2671|\u0301|\u2800|\\u0301|\\u2800/);
    });

    it('with accents exact, tells letters with different accents apart', async () => {
      expect((await send(exact, r, r.text('le p\u00e9cheur'))).status).toBe(200);
      expect((await send(exact, r, r.text('le pe\u0302cheur'))).status).toBe(400);
    });

    it('redacts an address and a phone number hidden by accents and braille blanks', async () => {
      const res = await send(pii, r, r.text('Mail bo\u0301b@example.com or call +1 415\u2800555\u28002671.'));
      expect(res.status).toBe(200);
      const received = JSON.stringify(lastBody());
      expect(received).toContain('Mail [EMAIL_1] or call [PHONE_1].');
      expect(received).not.toMatch(/example|2671/);
    });

    it('refuses a term written with JSON escapes in tool arguments', async () => {
      const sent = backend.requests.length;
      const res = await send(filtered, r, r.json('{"a":"project \\u0062luebird"}'));
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/content_filter/);
      expect(backend.requests.length).toBe(sent);
    });

    it('redacts an address written with JSON escapes in tool arguments, leaving JSON the backend parses', async () => {
      const res = await send(pii, r, r.json('{"m":"bob\\u0040example.com","n":"x"}'));
      expect(res.status).toBe(200);
      expect(JSON.stringify(lastBody())).not.toMatch(/bob|example/);
      expect(jsonStrings(lastBody())).toContainEqual({ m: '[EMAIL_1]', n: 'x' });
    });
  });

  describe('object keys', () => {
    it('redacts an address and a phone number that are chat metadata keys', async () => {
      const res = await send(pii, ROUTES[0], { ...ROUTES[0].text('hi'), metadata: { 'bob@example.com': 'owner', '+1 415 555 2671': 'line' } });
      expect(res.status).toBe(200);
      expect((lastBody() as { metadata: object }).metadata).toEqual({ '[EMAIL_1]': 'owner', '[PHONE_1]': 'line' });
    });

    it('redacts an address that is a Responses metadata key', async () => {
      const res = await send(pii, ROUTES[2], { ...ROUTES[2].text('hi'), metadata: { 'bob@example.com': 'owner' } });
      expect(res.status).toBe(200);
      expect((lastBody() as { metadata: object }).metadata).toEqual({ '[EMAIL_1]': 'owner' });
    });

    it('redacts an address and a phone number that are keys of a Messages tool call\'s input, and a metadata key', async () => {
      const body = {
        max_tokens: 50,
        metadata: { user_id: 'u1', 'bob@example.com': 'owner' },
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'save', input: { 'bob@example.com': { '+1 415 555 2671': 'home' }, note: 'x' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'saved' }] },
        ],
      };
      const res = await send(pii, ROUTES[4], body);
      expect(res.status).toBe(200);
      const received = lastBody() as { metadata: object; messages: Array<{ content: Array<{ input?: object }> }> };
      expect(received.metadata).toEqual({ user_id: 'u1', '[EMAIL_1]': 'owner' });
      expect(received.messages[1].content[0].input).toEqual({ '[EMAIL_1]': { '[PHONE_1]': 'home' }, note: 'x' });
    });

    it('redacts a key of a Messages tool call\'s input translated to chat arguments', async () => {
      const body = {
        max_tokens: 50,
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'save', input: { 'bob@example.com': 'owner' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'saved' }] },
        ],
      };
      expect((await send(pii, ROUTES[3], body)).status).toBe(200);
      expect(JSON.stringify(lastBody())).not.toContain('bob');
      expect(jsonStrings(lastBody())).toContainEqual({ '[EMAIL_1]': 'owner' });
    });
  });
});
