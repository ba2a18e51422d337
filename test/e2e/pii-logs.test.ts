// The PII plugin's promise that a value is never logged, end to end: the
// gateway runs as its own process at LOG_LEVEL=trace (every line it can
// write), with the plugin redacting requests and masking answers, and
// serves requests that carry an e-mail address, a phone number and a card
// number in every client protocol, streamed and JSON, answered with others;
// a pass-through request it refuses, a request it cannot parse, and one
// whose backend is down. Then every captured line (JSON or not, stdout and
// stderr) is searched for each value, as written and as bare digits.
import { makeKey } from '../support/gateway';
import { bearer, post } from '../support/http';
import { freePort, spawnGateway, type GatewayProcess } from '../support/process';
import { startSplitBackend, type SplitBackend } from '../support/split-backend';

/** What the client sends, and what the backend answers: a value of each kind in each. */
const ASKED = { email: 'dave@example.org', phone: '+44 20 7946 0958', card: '5555 5555 5555 4444' };
const ANSWERED = { email: 'carol@example.com', phone: '+1 (415) 555-2671', card: '4111 1111 1111 1111' };
const PROMPT = `Mail ${ASKED.email} or call ${ASKED.phone}; my card is ${ASKED.card}.`;
const ANSWER = `Write to ${ANSWERED.email}, call ${ANSWERED.phone}, pay with ${ANSWERED.card}.`;

/** Each value as written, and each number as its digits alone (a log could normalise it). */
const VALUES = [...Object.values(ASKED), ...Object.values(ANSWERED)].flatMap((v) => (/\d/.test(v) && !v.includes('@') ? [v, v.replace(/\D/g, '')] : [v]));

const PROTOCOLS = [
  { prefix: 'chat', path: '/v1/chat/completions', body: (model: string, stream: boolean) => ({ model, stream, messages: [{ role: 'user', content: PROMPT }] }) },
  { prefix: 'rt', path: '/v1/responses', body: (model: string, stream: boolean) => ({ model, stream, instructions: `Reply to ${ASKED.email}.`, input: PROMPT }) },
  { prefix: 'rn', path: '/v1/responses', body: (model: string, stream: boolean) => ({ model, stream, instructions: `Reply to ${ASKED.email}.`, input: PROMPT }) },
  { prefix: 'mt', path: '/v1/messages', body: (model: string, stream: boolean) => ({ model, stream, max_tokens: 50, system: `Reply to ${ASKED.email}.`, messages: [{ role: 'user', content: PROMPT }] }) },
  { prefix: 'mn', path: '/v1/messages', body: (model: string, stream: boolean) => ({ model, stream, max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'text', text: PROMPT }] }] }) },
];

describe('the PII plugin and the logs', () => {
  const alice = makeKey('alice');
  let backend: SplitBackend;
  let gw: GatewayProcess;

  beforeAll(async () => {
    backend = await startSplitBackend(ANSWER);
    const deadPort = await freePort();
    gw = await spawnGateway(JSON.stringify({
      server: { metrics: { port: 0 } },
      keys: [alice.entry],
      upstreams: {
        chat: { url: backend.base, format: 'openai' }, resp: { url: backend.base, apis: ['responses'] }, msg: { url: backend.base, apis: ['messages'] },
        dead: { url: `http://127.0.0.1:${deadPort}/v1`, format: 'openai', retry: { attempts: 0 } },
      },
      routes: [
        { model: 'chat-*', upstream: 'chat', dialect: 'openai' }, { model: 'rt-*', upstream: 'chat', dialect: 'openai' }, { model: 'rn-*', upstream: 'resp' },
        { model: 'mt-*', upstream: 'chat', dialect: 'openai' }, { model: 'mn-*', upstream: 'msg' }, { model: 'dead-*', upstream: 'dead' },
      ],
      passthrough: [{ path: '/v1/embeddings', upstream: 'chat' }],
      plugins: [{ name: 'pii', input: 'redact', output: 'mask' }],
    }), undefined, { LOG_LEVEL: 'trace' });
  });
  afterAll(async () => {
    gw.kill();
    await backend.close();
  });

  it('no log line holds a value it found, redacting requests and masking answers, in every protocol', async () => {
    const send = (path: string, body: unknown) => post(`${gw.url}${path}`, body, bearer(alice.key));
    let sent = 0;
    for (const p of PROTOCOLS) {
      for (const stream of [true, false]) {
        const res = await send(p.path, p.body(`${p.prefix}-${stream ? 'split10' : 'json'}`, stream));
        sent++;
        expect(res.status).toBe(200);
        // The plugin found every value: the backend got placeholders, the client masks.
        const received = JSON.stringify(backend.requests.at(-1)!.body);
        expect(received).toMatch(/\[EMAIL_1\][\s\S]*\[PHONE_1\][\s\S]*\[CARD_1\]/);
        for (const v of Object.values(ASKED)) expect(received).not.toContain(v);
        for (const mask of ['[EMAIL]', '[PHONE]', '[CARD]']) expect(res.text).toContain(mask);
        for (const v of Object.values(ANSWERED)) expect(res.text).not.toContain(v);
      }
    }
    // Refused (a pass-through body cannot be redacted), unreadable, and unreachable: the error paths log too.
    expect((await send('/v1/embeddings', { model: 'chat-1', input: PROMPT })).body.error.reason).toBe('pii_detected');
    expect((await send('/v1/chat/completions', { model: 'chat-1', messages: PROMPT })).status).toBe(400);
    expect((await send('/v1/chat/completions', PROTOCOLS[0].body('dead-1', false))).status).toBe(502);
    sent += 3;

    await gw.waitForLogs('request', sent);
    // The capture holds debug lines too: the dead backend's attempt was logged at that level.
    await gw.waitForLog('upstream attempt failed');
    const lines = [...gw.logs.map((l) => JSON.stringify(l)), ...gw.garbled, ...gw.stderr.split('\n')];
    for (const v of VALUES) expect({ value: v, lines: lines.filter((l) => l.includes(v)) }).toEqual({ value: v, lines: [] });
  });
});
