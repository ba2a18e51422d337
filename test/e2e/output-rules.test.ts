// Output rules on answers, end to end, in every client protocol and backend
// kind: chat completions (openai and native formats), Responses and Messages
// (translated through a chat backend, and relayed from a backend that serves
// them). A blocked term the backend streams in 2, 3 and 10 deltas of its own
// never reaches the client, not one piece of it, and the stream ends as the
// protocol says a filter ended it, charged its usage; a masked one goes on;
// an answer with no match arrives with its events unchanged; JSON answers
// are checked whole.
import pino from 'pino';
import { randomUUID } from 'node:crypto';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, type JsonResponse } from '../support/http';
import { startSplitBackend, USAGE, type SplitBackend } from '../support/split-backend';
import { until } from '../support/wait';

const ANSWER = 'We call it Project Bluebird today, and more after.';
const TERM = 'Project Bluebird';
const BEFORE = 'We call it ';
const AFTER = ' today, and more after.';
const MASKED = 'We call it [redacted] today, and more after.';
/** No word of it begins like the term, so nothing is ever held back. */
const CLEAN = 'We call it Sparrow today, and more after.';
/** It begins like the term, then is not it. */
const NEAR = 'We call it Project Sparrow today.';

type Event = Record<string, any>;

interface Protocol {
  name: string;
  path: string;
  /** The route's model prefix: which backend kind answers. */
  prefix: string;
  /** The backend's path for it: where the gateway sends the request. */
  wire: string;
  body(model: string, stream: boolean): object;
  /** The answer's text (or its tool call's arguments) as the client got it. */
  text(events: Event[]): string;
  /** How the stream ended: the protocol's finish, in one word. */
  ending(events: Event[]): string | undefined;
  /** The same for a JSON answer. */
  jsonText(body: Event): string;
  jsonEnding(body: Event): string | undefined;
}

const chatText = (events: Event[]): string => events.flatMap((e) => e.choices ?? []).map((c: Event) => c.delta?.content ?? c.delta?.tool_calls?.[0]?.function?.arguments ?? '').join('');
const chatEnding = (events: Event[]): string | undefined => events.flatMap((e) => e.choices ?? []).map((c: Event) => c.finish_reason).filter(Boolean).at(-1);
const chatBody = (model: string, stream: boolean) => ({ model, stream, messages: [{ role: 'user', content: 'Name it.' }] });

const CHAT_JSON = {
  jsonText: (b: Event) => b.choices[0].message.content ?? b.choices[0].message.tool_calls?.[0]?.function.arguments ?? '',
  jsonEnding: (b: Event) => b.choices[0].finish_reason,
};

const RESPONSES = {
  path: '/v1/responses',
  body: (model: string, stream: boolean) => ({ model, stream, input: 'Name it.' }),
  text: (events: Event[]) => events.filter((e) => e.type === 'response.output_text.delta' || e.type === 'response.function_call_arguments.delta').map((e) => e.delta).join(''),
  ending: (events: Event[]) => { const last = events.at(-1); return last?.type === 'response.incomplete' ? `incomplete:${last.response.incomplete_details?.reason}` : last?.type; },
  jsonText: (b: Event) => b.output.map((i: Event) => i.arguments ?? i.content?.map((p: Event) => p.text).join('') ?? '').join(''),
  jsonEnding: (b: Event) => (b.status === 'incomplete' ? `incomplete:${b.incomplete_details?.reason}` : b.status),
};

const MESSAGES = {
  path: '/v1/messages',
  body: (model: string, stream: boolean) => ({ model, stream, max_tokens: 100, messages: [{ role: 'user', content: 'Name it.' }] }),
  text: (events: Event[]) => events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text ?? e.delta.partial_json ?? '').join(''),
  ending: (events: Event[]) => (events.at(-1)?.type === 'message_stop' ? events.find((e) => e.type === 'message_delta')?.delta.stop_reason : events.at(-1)?.type),
  jsonText: (b: Event) => b.content.map((c: Event) => c.text ?? JSON.stringify(c.input)).join(''),
  jsonEnding: (b: Event) => b.stop_reason,
};

const PROTOCOLS: Protocol[] = [
  { name: 'chat, openai backend', path: '/v1/chat/completions', prefix: 'chat', wire: '/chat/completions', body: chatBody, text: chatText, ending: chatEnding, ...CHAT_JSON },
  { name: 'chat, native backend', path: '/v1/chat/completions', prefix: 'nat', wire: '/chat/completions', body: chatBody, text: chatText, ending: chatEnding, ...CHAT_JSON },
  { name: 'responses, through chat', prefix: 'rt', wire: '/chat/completions', ...RESPONSES },
  { name: 'responses, native', prefix: 'rn', wire: '/responses', ...RESPONSES },
  { name: 'messages, through chat', prefix: 'mt', wire: '/chat/completions', ...MESSAGES },
  { name: 'messages, native', prefix: 'mn', wire: '/messages', ...MESSAGES },
];

/** The text of each text delta in order, in any of the wire protocols (chat chunks, Responses' and Messages' events); empty ones left out. */
const textDeltas = (events: Event[]): string[] => events
  .map((e) => e.choices?.[0]?.delta?.content ?? (e.type === 'response.output_text.delta' ? e.delta : undefined) ?? (e.type === 'content_block_delta' ? e.delta.text : undefined))
  .filter((t): t is string => typeof t === 'string' && t !== '');

/** Each event's data, parsed ([DONE] as the string), from a raw SSE body. */
function eventsOf(raw: string): Event[] {
  return raw.split('\n\n').map((block) => block.split('\n').find((l) => l.startsWith('data: '))?.slice(6)).filter((d): d is string => d !== undefined)
    .map((d) => (d === '[DONE]' ? { done: true } : JSON.parse(d)));
}

const ROUTES = [
  { model: 'chat-*', upstream: 'chat', dialect: 'openai' }, { model: 'nat-*', upstream: 'nat' },
  { model: 'rt-*', upstream: 'chat', dialect: 'openai' }, { model: 'rn-*', upstream: 'resp' },
  { model: 'mt-*', upstream: 'chat', dialect: 'openai' }, { model: 'mn-*', upstream: 'msg' },
];

describe('output rules, end to end', () => {
  const alice = makeKey('alice');
  const lines: string[] = [];
  let term: SplitBackend;
  let clean: SplitBackend;
  let near: SplitBackend;
  const gateways: Record<string, TestGateway> = {};

  const start = async (name: string, backend: SplitBackend, output?: object): Promise<void> => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    gateways[name] = await startGateway({
      keys: [alice.entry],
      upstreams: {
        chat: { url: backend.base, format: 'openai' }, nat: { url: backend.base, format: 'native' },
        resp: { url: backend.base, apis: ['responses'] }, msg: { url: backend.base, apis: ['messages'] },
      },
      routes: ROUTES,
      plugins: [{ name: 'content-filter', ...(output && { output }) }, { name: 'metrics' }],
    }, { logger });
  };

  beforeAll(async () => {
    term = await startSplitBackend(ANSWER, TERM);
    clean = await startSplitBackend(CLEAN);
    near = await startSplitBackend(NEAR);
    await start('block', term, { terms: ['project bluebird'] });
    await start('mask', term, { terms: ['project bluebird'], action: 'mask' });
    await start('cleanOn', clean, { terms: ['project bluebird'] });
    await start('cleanOff', clean);
    await start('near', near, { terms: ['project bluebird'] });
  });
  afterAll(async () => {
    await Promise.all(Object.values(gateways).map((g) => g.close()));
    await term.close();
    await clean.close();
    await near.close();
  });

  /** Sends one request; its access line once written. */
  async function send(gw: string, p: Protocol, model: string, stream: boolean): Promise<{ res: JsonResponse; events: Event[]; access: () => Promise<Event> }> {
    const id = randomUUID();
    const res = await call('POST', `${gateways[gw].url}${p.path}`, JSON.stringify(p.body(model, stream)), { 'content-type': 'application/json', 'x-request-id': id, ...bearer(alice.key) });
    const find = () => lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.requestId === id);
    const access = async () => { await until(() => find() !== undefined, `the access line of ${id}`); return find(); };
    return { res, events: stream ? eventsOf(res.text) : [], access };
  }

  const CUT: Record<string, string> = { chat: 'content_filter', nat: 'content_filter', rt: 'incomplete:content_filter', rn: 'incomplete:content_filter', mt: 'refusal', mn: 'refusal' };
  const DONE: Record<string, string> = { chat: 'stop', nat: 'stop', rt: 'response.completed', rn: 'response.completed', mt: 'end_turn', mn: 'end_turn' };

  describe.each(PROTOCOLS)('$name', (p) => {
    it.each([2, 3, 10])('never sends a blocked term the backend streams in %i deltas of its own, ends with the filter\'s finish, and is charged the backend\'s usage', async (n) => {
      const model = `${p.prefix}-term-split${n}`;
      // Asked directly, the backend sends the text before the term as one delta, the term in exactly n, then the rest.
      const direct = await call('POST', `${term.base}${p.wire}`, JSON.stringify({ model, stream: true }), { 'content-type': 'application/json' });
      const pieces = textDeltas(eventsOf(direct.text));
      expect(pieces).toHaveLength(n + 2);
      expect([pieces[0], pieces.slice(1, -1).join(''), pieces.at(-1)]).toEqual([BEFORE, TERM, AFTER]);

      const { res, events, access } = await send('block', p, model, true);
      expect(res.status).toBe(200);
      // Everything before the term goes out, as the one delta it came in. Nothing of the term does: each
      // of its prefixes ("P", "Pr", ... "Project Bluebir") starts where a word may start and could still
      // begin the term, so the hold-back keeps it until the term is whole, and the term is then blocked.
      expect(textDeltas(events)).toEqual([BEFORE]);
      expect(p.text(events)).toBe(BEFORE);
      // Not in any event either: a Responses ending repeats the output, a Messages one its blocks.
      expect(res.text).not.toMatch(/bluebird|Project/i);
      expect(p.ending(events)).toBe(CUT[p.prefix]);
      if (p.prefix === 'chat' || p.prefix === 'nat') {
        expect(events.at(-1)).toEqual({ done: true });
        expect(events.at(-2)!.usage).toMatchObject({ prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion });
      }
      expect(await access()).toMatchObject({ status: 200, filtered: 'block', tokens: { prompt: USAGE.prompt, completion: USAGE.completion, estimated: false } });
    });

    it('checks a tool call\'s arguments like text', async () => {
      const { events } = await send('block', p, `${p.prefix}-tool-split10`, true);
      expect(p.text(events)).toBe(`{"note":"${BEFORE}`);
      expect(p.ending(events)).toBe(CUT[p.prefix]);
    });

    it('charges a stream cut before the backend reported its usage an estimate of all it generated', async () => {
      const { events, access } = await send('block', p, `${p.prefix}-split10-paced`, true);
      expect(p.text(events)).toBe(BEFORE);
      const line = await access();
      expect(line).toMatchObject({ filtered: 'block', tokens: { estimated: true } });
      // The withheld text was generated too: it is in the count.
      expect(line.tokens.completion).toBeGreaterThanOrEqual(Math.ceil('We call it Project Bluebird'.length / 4) - 1);
    });

    it('masks the term and goes on to the end', async () => {
      const { events, access } = await send('mask', p, `${p.prefix}-split10`, true);
      expect(p.text(events)).toBe(MASKED);
      expect(p.ending(events)).toBe(DONE[p.prefix]);
      if (p.prefix === 'rn') {
        expect(events.find((e) => e.type === 'response.output_text.done')!.text).toBe(MASKED);
        expect(events.at(-1)!.response.output[0].content[0].text).toBe(MASKED);
        expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      }
      expect(await access()).toMatchObject({ filtered: 'mask', tokens: { completion: USAGE.completion } });
    });

    it.each([2, 3, 10])('relays an answer with no match in %i deltas with its events unchanged', async (n) => {
      // What differs between two runs of one answer by design: the ids and times the gateway or backend makes for each.
      const without = (e: Event): string => JSON.stringify(e, (k, v) => (['id', 'item_id', 'created', 'created_at', 'completed_at', 'call_id'].includes(k) ? undefined : v));
      const on = await send('cleanOn', p, `${p.prefix}-split${n}`, true);
      const off = await send('cleanOff', p, `${p.prefix}-split${n}`, true);
      expect(p.text(on.events)).toBe(CLEAN);
      expect(on.events.map(without)).toEqual(off.events.map(without));
      expect((await on.access()).filtered).toBeUndefined();
    });

    it('checks a JSON answer whole: blocked, it ends as the filter ended it; masked, it goes on', async () => {
      const blocked = await send('block', p, `${p.prefix}-json`, false);
      expect(blocked.res.status).toBe(200);
      expect(p.jsonText(blocked.res.body)).toBe(BEFORE);
      expect(p.jsonEnding(blocked.res.body)).toBe(CUT[p.prefix]);
      const masked = await send('mask', p, `${p.prefix}-json`, false);
      expect(p.jsonText(masked.res.body)).toBe(MASKED);
      expect((await blocked.access()).filtered).toBe('block');
    });
  });

  it('holds back text that could begin a term, and sends it whole once it cannot', async () => {
    // Deltas "We ", "cal", "l i", "t Pr", "oje", "ct ", "Spar", ...: "Pr", "Proje" and "Project " may begin "project bluebird".
    const { events } = await send('near', PROTOCOLS[0], 'chat-split10', true);
    const sent = events.map((e) => e.choices?.[0]?.delta?.content).filter((c) => c !== undefined && c !== '');
    expect(sent).toEqual(['We ', 'cal', 'l i', 't ', 'Project Spar', 'row', ' to', 'day.']);
  });

  it('counts what the rules did by plugin, kind and action', async () => {
    const metric = gateways.block.gateway.services.metrics!.getSingleMetric('sluice_output_filtered_total')!;
    const values = (await metric.get()).values;
    expect(values).toEqual(expect.arrayContaining([expect.objectContaining({ labels: { plugin: 'content-filter', kind: 'term', action: 'block' } })]));
    expect(values.find((v) => v.labels.action === 'block')!.value).toBeGreaterThanOrEqual(PROTOCOLS.length * 5);
  });
});
