// The transform stage: a plugin that rewrites the request's texts runs before
// every validate plugin, whatever the config's order, and what it leaves is
// what the content filter matches and what the backend receives, in every
// client protocol (a backend serving Responses or Messages gets the client's
// own body, rewritten). The PII plugin redacts on the way in and masks on
// the way out.
import { z } from 'zod';
import { rewriteTexts, type PluginDefinition } from '../../src';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call } from '../support/http';
import { startSplitBackend, type SplitBackend } from '../support/split-backend';

/** Replaces one string with another in every text of the request. */
const swap: PluginDefinition<{ from: string; to: string }> = {
  name: 'swap',
  stage: 'transform',
  schema: z.strictObject({ from: z.string().min(1), to: z.string() }),
  create: ({ from, to }) => ({ onRequest(ctx) { rewriteTexts(ctx, (text) => text.split(from).join(to)); } }),
};

interface Case { name: string; path: string; model: string; body(text: string): object }

const CASES: Case[] = [
  { name: 'chat', path: '/v1/chat/completions', model: 'chat-json', body: (t) => ({ messages: [{ role: 'system', content: `Be brief about ${t}.` }, { role: 'user', content: `Tell me of ${t}` }], tools: [{ type: 'function', function: { name: 'look', description: `Looks up ${t}`, parameters: { type: 'object' } } }] }) },
  { name: 'responses, through chat', path: '/v1/responses', model: 'rt-json', body: (t) => ({ instructions: `Be brief about ${t}.`, input: [{ role: 'user', content: [{ type: 'input_text', text: `Tell me of ${t}` }] }] }) },
  { name: 'responses, native', path: '/v1/responses', model: 'rn-json', body: (t) => ({ instructions: `Be brief about ${t}.`, input: `Tell me of ${t}`, tools: [{ type: 'function', name: 'look', description: `Looks up ${t}`, parameters: { type: 'object' } }] }) },
  { name: 'messages, through chat', path: '/v1/messages', model: 'mt-json', body: (t) => ({ max_tokens: 50, system: `Be brief about ${t}.`, messages: [{ role: 'user', content: `Tell me of ${t}` }] }) },
  { name: 'messages, native', path: '/v1/messages', model: 'mn-json', body: (t) => ({ max_tokens: 50, system: [{ type: 'text', text: `Be brief about ${t}.` }], messages: [{ role: 'user', content: [{ type: 'text', text: `Tell me of ${t}` }] }] }) },
];

const ROUTES = [
  { model: 'chat-*', upstream: 'chat', dialect: 'openai' }, { model: 'rt-*', upstream: 'chat', dialect: 'openai' }, { model: 'rn-*', upstream: 'resp' },
  { model: 'mt-*', upstream: 'chat', dialect: 'openai' }, { model: 'mn-*', upstream: 'msg' },
];

describe('the transform stage', () => {
  const alice = makeKey('alice');
  let backend: SplitBackend;
  let refusing: TestGateway;
  let redacting: TestGateway;

  const start = (backendBase: string, plugins: object[]): Promise<TestGateway> => startGateway({
    keys: [alice.entry],
    upstreams: { chat: { url: backendBase, format: 'openai' }, resp: { url: backendBase, apis: ['responses'] }, msg: { url: backendBase, apis: ['messages'] } },
    routes: ROUTES,
    plugins,
  }, { plugins: [swap] });

  beforeAll(async () => {
    backend = await startSplitBackend('An answer.');
    // The content filter comes first in the config: the stage puts the transform before it all the same.
    refusing = await start(backend.base, [{ name: 'content-filter', terms: ['forbidden phrase'] }, { name: 'swap', from: 'harmless thing', to: 'forbidden phrase' }]);
    redacting = await start(backend.base, [{ name: 'content-filter', terms: ['forbidden phrase'] }, { name: 'swap', from: 'forbidden phrase', to: '[gone]' }]);
  });
  afterAll(async () => {
    await refusing.close();
    await redacting.close();
    await backend.close();
  });

  const send = (gw: TestGateway, c: Case, text: string) =>
    call('POST', `${gw.url}${c.path}`, JSON.stringify({ model: c.model, ...c.body(text) }), { 'content-type': 'application/json', ...bearer(alice.key) });

  describe.each(CASES)('$name', (c) => {
    it('the content filter matches what the transform wrote', async () => {
      const sent = backend.requests.length;
      const res = await send(refusing, c, 'a harmless thing');
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/content_filter/);
      expect(backend.requests.length).toBe(sent);
    });

    it('the content filter and the backend see what the transform left', async () => {
      const res = await send(redacting, c, 'a forbidden phrase');
      expect(res.status).toBe(200);
      const received = JSON.stringify(backend.requests.at(-1)!.body);
      expect(received).toContain('[gone]');
      expect(received).not.toContain('forbidden phrase');
    });
  });
});

describe('the PII plugin, end to end', () => {
  const alice = makeKey('alice');
  let backend: SplitBackend;
  let gw: TestGateway;

  beforeAll(async () => {
    backend = await startSplitBackend('Write to carol@example.com or call +1 (415) 555-2671 today.');
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: { chat: { url: backend.base, format: 'openai' }, resp: { url: backend.base, apis: ['responses'] } },
      routes: [{ model: 'chat-*', upstream: 'chat', dialect: 'openai' }, { model: 'rn-*', upstream: 'resp' }],
      plugins: [{ name: 'pii' }, { name: 'content-filter', terms: ['bob@example.com'] }],
    });
  });
  afterAll(async () => {
    await gw.close();
    await backend.close();
  });

  it('redacts a native Responses request with placeholders stable within it, and masks the streamed answer', async () => {
    const body = { model: 'rn-split10', stream: true, instructions: 'You write to bob@example.com.', input: 'Mail bob@example.com and ann@example.org.' };
    const res = await call('POST', `${gw.url}/v1/responses`, JSON.stringify(body), { 'content-type': 'application/json', ...bearer(alice.key) });
    // The content filter read the redacted request: its term is gone.
    expect(res.status).toBe(200);
    expect(backend.requests.at(-1)!.body).toMatchObject({ instructions: 'You write to [EMAIL_1].', input: 'Mail [EMAIL_1] and [EMAIL_2].' });
    const text = res.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))).filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    expect(text).toBe('Write to [EMAIL] or call [PHONE] today.');
    // Anywhere in the stream (the done events repeat the text), the generated response ids aside: 48 random hex digits hold "555" about once in a hundred.
    expect(res.text.replace(/resp_[0-9a-f]+/g, 'resp_')).not.toMatch(/carol|555/);
  });

  it('masks a JSON chat answer', async () => {
    const res = await call('POST', `${gw.url}/v1/chat/completions`, JSON.stringify({ model: 'chat-json', messages: [{ role: 'user', content: 'Who?' }] }), { 'content-type': 'application/json', ...bearer(alice.key) });
    expect(res.body.choices[0].message.content).toBe('Write to [EMAIL] or call [PHONE] today.');
  });
});
