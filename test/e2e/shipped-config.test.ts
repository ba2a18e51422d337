// The shipped config/gateway.yaml with its demo backend and demo key. The file
// binds the demo backend to 127.0.0.1:8081; here it runs on an ephemeral port
// (format: demo without url), everything else exactly as shipped.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { loadConfigFile } from '../../src/config/load';
import { closeDemoBackends } from '../../src/runtime';
import { startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, post, postSse } from '../support/http';
import { expectError } from '../support/errors';

const FILE = resolve(__dirname, '../../config/gateway.yaml');
const DEMO_KEY = 'sk-sluice-demo';

describe('shipped config/gateway.yaml', () => {
  let gw: TestGateway;
  const say = { role: 'user', content: 'Hello there' };

  beforeAll(async () => {
    const raw = parseYaml(readFileSync(FILE, 'utf8'));
    delete raw.upstreams.demo.url;
    gw = await startGateway(raw, { file: FILE });
  });
  afterAll(async () => { await gw.close(); await closeDemoBackends(); });

  it('validates as shipped: 127.0.0.1:8080, the demo backend on 127.0.0.1:8081, no Redis', () => {
    const { config } = loadConfigFile(FILE, { ...process.env, PORT: '' });
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8080 });
    expect(config.upstreams.demo).toMatchObject({ format: 'demo', url: 'http://127.0.0.1:8081/v1' });
    expect(config.redis).toBeUndefined();
    expect(config.routes.map((r) => r.model)).toEqual(['demo-chat', 'demo-image']);
  });

  it('answers a chat completion for the demo key', async () => {
    const res = await post(`${gw.url}/v1/chat/completions`, { model: 'demo-chat', messages: [say] }, bearer(DEMO_KEY));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'chat.completion', model: 'demo-chat', created: expect.any(Number), choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }] });
    expect(res.body.choices[0].message.content).toContain('You said: "Hello there"');
    expect(res.body.usage.total_tokens).toBe(res.body.usage.prompt_tokens + res.body.usage.completion_tokens);
  });

  it('streams the same reply word by word', async () => {
    const plain = await post(`${gw.url}/v2/chat/completions`, { model: 'demo-chat', messages: [say] }, bearer(DEMO_KEY));
    const res = await postSse(`${gw.url}/v2/chat/completions`, { model: 'demo-chat', stream: true, messages: [say] }, bearer(DEMO_KEY));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.events.at(-1)!.data).toBe('[DONE]');
    const chunks = res.events.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(chunks.length).toBeGreaterThan(5);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.at(-1)).toMatchObject({ choices: [{ delta: {}, finish_reason: 'stop' }], usage: { total_tokens: expect.any(Number) } });
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe(plain.body.choices[0].message.content);
    expect(res.events.at(-1)!.at - res.events[0].at).toBeGreaterThan(100);
  });

  it('generates images whose URLs the demo backend serves', async () => {
    const res = await post(`${gw.url}/v2/images/generations`, { model: 'demo-image', prompt: 'a lighthouse at dusk', model_params: { n: 2, size: '512x512' } }, bearer(DEMO_KEY));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.any(String), created: expect.any(Number), data: [{ url: expect.any(String) }, { url: expect.any(String) }] });
    const image = await call('GET', res.body.data[1].url, undefined);
    expect(image.status).toBe(200);
    expect(image.headers['content-type']).toBe('image/svg+xml');
    expect(image.text).toContain('width="512"');
  });

  it('lists the demo models and keeps each on its endpoint', async () => {
    const models = await call('GET', `${gw.url}/v1/models`, undefined, bearer(DEMO_KEY));
    expect(models.body.data.map((m: any) => [m.id, m.endpoints])).toEqual([['demo-chat', ['chat']], ['demo-image', ['images']]]);
    expectError(await post(`${gw.url}/v1/images/generations`, { model: 'demo-chat', prompt: 'p' }, bearer(DEMO_KEY)), 404, 'model_not_found');
  });

  it('runs the shipped content filter and refuses other keys', async () => {
    expectError(await post(`${gw.url}/v1/chat/completions`, { model: 'demo-chat', messages: [{ role: 'user', content: 'a forbidden phrase' }] }, bearer(DEMO_KEY)), 400, 'content_filter', 'prompt');
    expectError(await post(`${gw.url}/v1/chat/completions`, { model: 'demo-chat', messages: [say] }, bearer('sk-not-the-demo')), 401, 'unauthorized');
  });

  const chat = (content: string) => post(`${gw.url}/v1/chat/completions`, { model: 'demo-chat', messages: [{ role: 'user', content }] }, bearer(DEMO_KEY));

  it.each([
    ['an invisible character between two spaces', 'my credit \u200b card number'],
    ['zero-width joiners in place of spaces', 'my credit\u200dcard\u200dnumber'],
    ['a word joiner and a soft hyphen inside a word', 'my cred\u2060it card num\u00adber'],
    ['compatibility forms (full-width letters)', 'my \uff43\uff52\uff45\uff44\uff49\uff54 card number'],
    ['combining marks over letters', 'my c\u0336r\u0336e\u0336d\u0336i\u0336t\u0336 ca\u0332rd nu\u0338\u0322m\u0335\u0327ber'],
    ['Cyrillic letters that look Latin', 'my \u0441redit \u0441\u0430rd number'],
    ['a term in Greek and Cyrillic look-alikes', 'a f\u03bfrbidden phr\u0430se'],
    ['a term in Cyrillic capitals', '\u0410 FORBIDDEN PHR\u0410SE'],
  ])('sees through %s', async (_what, content) => {
    expectError(await chat(content), 400, 'content_filter', 'prompt');
  });

  it.each([
    ['Russian', 'Привет! Как пройти к вокзалу? Мне нужна карта города.'],
    ['Greek', 'Καλημέρα, θα ήθελα έναν καφέ και ένα νερό, παρακαλώ.'],
    ['Chinese', '请帮我写一封感谢信，谢谢你的帮助。'],
    ['Japanese', 'がっこうへいきます。カードの番号を教えてください。'],
    ['Hindi', 'कृपया मुझे रेलवे स्टेशन का रास्ता बताइए।'],
    ['Arabic', 'من فضلك، أين محطة القطار؟'],
    ['French', 'Un café crème et une carte, s\'il vous plaît.'],
  ])('lets ordinary %s text through', async (_language, content) => {
    expect((await chat(content)).status).toBe(200);
  });
});
