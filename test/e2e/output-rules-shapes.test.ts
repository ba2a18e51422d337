// Output rules against the shapes of model output an attacker would script,
// on chat completions (openai and native backends) and on the Responses and
// Messages APIs translated through a chat backend: a term whose text a tool
// call or an early finish reason interrupts, a term in tool arguments or
// JSON-mode content hidden behind JSON escapes, reasoning and refusal text,
// and a cut stream's finish reason. Text that reads as one to the client is
// checked as one; nothing of a blocked term reaches the client.
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';
import { chunk, toolDelta, usageChunk } from '../support/chat-chunks';
import { startChunkBackend, type ChunkBackend } from '../support/chunk-backend';

type Event = Record<string, any>;

const alice = makeKey('alice');
const ROUTES = [
  { model: 'chat-*', upstream: 'chat', dialect: 'openai' }, { model: 'nat-*', upstream: 'nat' },
  { model: 'rt-*', upstream: 'chat', dialect: 'openai' }, { model: 'mt-*', upstream: 'chat', dialect: 'openai' },
];

interface Client { name: string; prefix: string; path: string; body(model: string, stream: boolean): object }
const chatBody = (model: string, stream: boolean) => ({ model, stream, messages: [{ role: 'user', content: 'Go.' }] });
const CLIENTS: Client[] = [
  { name: 'chat, openai backend', prefix: 'chat', path: '/v1/chat/completions', body: chatBody },
  { name: 'chat, native backend', prefix: 'nat', path: '/v1/chat/completions', body: chatBody },
  { name: 'responses, through chat', prefix: 'rt', path: '/v1/responses', body: (model, stream) => ({ model, stream, input: 'Go.' }) },
  { name: 'messages, through chat', prefix: 'mt', path: '/v1/messages', body: (model, stream) => ({ model, stream, max_tokens: 100, messages: [{ role: 'user', content: 'Go.' }] }) },
];

/** Every text a client was sent, in order, whatever the protocol and field: what a reader of the answer would see. */
function seen(events: Event[]): string {
  const out: string[] = [];
  for (const e of events) {
    for (const c of e.choices ?? []) {
      const d = c.delta ?? {};
      out.push(d.reasoning_content ?? '', d.reasoning ?? '', d.content ?? '', d.refusal ?? '', ...(d.tool_calls ?? []).map((t: Event) => t.function?.arguments ?? ''));
    }
    if (typeof e.delta === 'string' && e.type?.endsWith('.delta')) out.push(e.delta);
    if (e.type === 'content_block_delta') out.push(e.delta.text ?? e.delta.partial_json ?? e.delta.thinking ?? '');
  }
  return out.join('');
}

/** How the answer ended, in one word per protocol. */
function ending(events: Event[]): string | undefined {
  const reasons = events.flatMap((e) => e.choices ?? []).map((c: Event) => c.finish_reason).filter(Boolean);
  if (reasons.length > 0) return reasons.at(-1);
  const done = events.find((e) => e.type === 'response.incomplete' || e.type === 'response.completed');
  if (done) return done.type === 'response.incomplete' ? `incomplete:${done.response.incomplete_details?.reason}` : 'completed';
  return events.find((e) => e.type === 'message_delta')?.delta.stop_reason;
}

const CUT: Record<string, string> = { chat: 'content_filter', nat: 'content_filter', rt: 'incomplete:content_filter', mt: 'refusal' };

async function stream(gw: TestGateway, client: Client): Promise<Event[]> {
  const res = await postSse(`${gw.url}${client.path}`, client.body(`${client.prefix}-m`, true), bearer(alice.key));
  expect(res.status).toBe(200);
  return res.events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
}

describe('output rules on scripted shapes of model output', () => {
  let backend: ChunkBackend;
  let blocking: TestGateway;
  let masking: TestGateway;

  beforeAll(async () => {
    backend = await startChunkBackend();
    const upstreams = { chat: { url: backend.base, format: 'openai' }, nat: { url: backend.base, format: 'native' } };
    blocking = await startGateway({ keys: [alice.entry], upstreams, routes: ROUTES, plugins: [{ name: 'content-filter', output: { terms: ['project bluebird'] } }] });
    masking = await startGateway({ keys: [alice.entry], upstreams, routes: ROUTES, plugins: [{ name: 'pii', output: 'mask' }] });
  });
  afterAll(async () => {
    await blocking.close();
    await masking.close();
    await backend.close();
  });

  const call = { id: 'call_1', name: 'note' };

  describe.each(CLIENTS)('$name', (client) => {
    it('catches a term whose text a tool call interrupts', async () => {
      backend.chunks = [chunk({ role: 'assistant', content: 'ok project ' }), chunk(toolDelta(0, '{}', call)), chunk({ content: 'bluebird done' }), chunk({}, 'tool_calls'), usageChunk(5, 9)];
      const events = await stream(blocking, client);
      expect(seen(events)).not.toMatch(/bluebird/);
      expect(ending(events)).toBe(CUT[client.prefix]);
    });

    it('catches a term whose text an early finish reason interrupts', async () => {
      backend.chunks = [chunk({ role: 'assistant', content: 'ok project ' }, 'stop'), chunk({ content: 'bluebird done' }), chunk({}, 'stop'), usageChunk(5, 9)];
      const events = await stream(blocking, client);
      expect(seen(events)).not.toMatch(/bluebird/);
      expect(ending(events)).toBe(CUT[client.prefix]);
    });

    it('catches a term in tool arguments behind a JSON escape, split across deltas', async () => {
      backend.chunks = [chunk(toolDelta(0, '{"a":"project \\u00', call)), chunk(toolDelta(0, '62luebird"}')), chunk({}, 'tool_calls'), usageChunk(5, 9)];
      const events = await stream(blocking, client);
      expect(seen(events)).not.toMatch(/project \\u0062luebird|bluebird|luebird/);
      expect(ending(events)).toBe(CUT[client.prefix]);
    });

    it('masks an e-mail address in JSON-mode content behind a JSON escape', async () => {
      backend.chunks = [chunk({ role: 'assistant', content: '{"m":"bob\\u00' }), chunk({ content: '40example.com"}' }), chunk({}, 'stop'), usageChunk(5, 9)];
      const events = await stream(masking, client);
      const text = seen(events);
      expect(text).not.toMatch(/example\.com/);
      expect(text).toContain('[EMAIL]');
    });

    it('catches a term in reasoning and in refusal text', async () => {
      for (const field of ['reasoning_content', 'refusal']) {
        backend.chunks = [chunk({ role: 'assistant', [field]: 'we call it project ' }), chunk({ [field]: 'bluebird now' }), chunk({ content: 'fine' }, 'stop'), usageChunk(5, 9)];
        const events = await stream(blocking, client);
        expect(seen(events)).not.toMatch(/bluebird/);
        expect(ending(events)).toBe(CUT[client.prefix]);
      }
    });

    it('checks a JSON answer\'s reasoning, refusal and escaped tool arguments', async () => {
      const res = await post(`${blocking.url}${client.path}`, client.body(`${client.prefix}-m`, false), bearer(alice.key));
      expect(res.status).toBe(200);
      for (const chunks of [
        [chunk({ role: 'assistant', reasoning_content: 'it is project bluebird' }), chunk({ content: 'fine' }, 'stop')],
        [chunk({ role: 'assistant', refusal: 'not project bluebird' }, 'stop')],
        [chunk(toolDelta(0, '{"a":"project \\u0062luebird"}', call), 'tool_calls')],
      ]) {
        backend.chunks = [...chunks, usageChunk(5, 9)];
        const answer = await post(`${blocking.url}${client.path}`, client.body(`${client.prefix}-m`, false), bearer(alice.key));
        expect(answer.status).toBe(200);
        expect(JSON.stringify(answer.body)).not.toMatch(/bluebird|\\\\u0062luebird/);
      }
    });
  });

  it('leaves reasoning alone under rules that opt out of it (output.reasoning: false), and still reads the content', async () => {
    const gw = await startGateway({
      keys: [alice.entry], upstreams: { chat: { url: backend.base, format: 'openai' } }, routes: [{ model: 'chat-*', upstream: 'chat', dialect: 'openai' }],
      plugins: [{ name: 'content-filter', output: { terms: ['project bluebird'], reasoning: false } }],
    });
    try {
      backend.chunks = [chunk({ role: 'assistant', reasoning_content: 'think: project bluebird' }), chunk({ content: 'ok, project bluebird' }, 'stop'), usageChunk(5, 9)];
      const events = await stream(gw, CLIENTS[0]);
      expect(seen(events)).toBe('think: project bluebirdok, ');
      expect(ending(events)).toBe('content_filter');
    } finally {
      await gw.close();
    }
  });

  it.each(['chat', 'nat'])('a cut chat stream (%s backend) ends with content_filter even when the backend said stop in the same chunk', async (prefix) => {
    backend.chunks = [chunk({ role: 'assistant', content: 'we call it project bluebird' }, 'stop'), usageChunk(5, 9)];
    const events = await stream(blocking, CLIENTS.find((c) => c.prefix === prefix)!);
    expect(seen(events)).toBe('we call it ');
    expect(events.flatMap((e) => e.choices ?? []).map((c: Event) => c.finish_reason).filter(Boolean)).toEqual(['content_filter']);
  });
});
