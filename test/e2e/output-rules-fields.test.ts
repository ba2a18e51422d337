// Output rules read every text of a Responses or Messages answer relayed
// from a backend that serves the API itself, not only its text deltas: text
// that reads as one to the client (output_text across content parts and
// across message items; Messages text blocks) is checked as one; refusals,
// reasoning text and summaries, thinking, custom tool input, a tool call's
// input (keys and values), citations, text already in an .added event or a
// block's start, and text only in an event that repeats it whole
// (output_item.done, response.completed): a blocked term in any of them
// never reaches the client and the answer ends as the protocol says a filter
// ended it; a mask reaches the events that repeat the text. Streams and JSON
// answers alike; an answer with no match is relayed unchanged.
import { randomUUID } from 'node:crypto';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call } from '../support/http';
import { messagesScript, responsesScript, startScriptedBackend, USAGE, type ScriptedBackend } from '../support/scripted-backend';

type Event = Record<string, any>;

const SAY = 'We call it Project Bluebird today.';
const MASKED = 'We call it [redacted] today.';
/** The term cut in two where two parts meet. */
const HALVES = ['We call it Project', ' Bluebird today.'];

const part = (text: string) => ({ type: 'output_text', text, annotations: [] });
const message = (id: string, texts: string[]) => ({ type: 'message', id, role: 'assistant', status: 'completed', content: texts.map(part) });
const added = (index: number, item: Event) => ({ type: 'response.output_item.added', output_index: index, item });
const itemDone = (index: number, item: Event) => ({ type: 'response.output_item.done', output_index: index, item });

/** A message item streamed as the API does: each text a content part of its own, in one delta. */
function streamedMessage(index: number, id: string, texts: string[]): Event[] {
  const at = { item_id: id, output_index: index };
  return [
    added(index, { ...message(id, []), status: 'in_progress' }),
    ...texts.flatMap((text, ci) => [
      { type: 'response.content_part.added', ...at, content_index: ci, part: part('') },
      { type: 'response.output_text.delta', ...at, content_index: ci, delta: text, logprobs: [] },
      { type: 'response.output_text.done', ...at, content_index: ci, text, logprobs: [] },
      { type: 'response.content_part.done', ...at, content_index: ci, part: part(text) },
    ]),
    itemDone(index, message(id, texts)),
  ];
}

/** An item with one text, SAY, streamed in one delta; `field` names the whole text in its .done (and in its part, if it has one). */
function streamedItem(item: Event, done: Event, kind: string, field: string, parts?: { type: string; part: Event; index: Event }): Event[] {
  const at = { item_id: item.id, output_index: 0, ...parts?.index };
  return [
    added(0, item),
    ...(parts ? [{ type: `${parts.type}.added`, ...at, part: { ...parts.part, [field]: '' } }] : []),
    { type: `${kind}.delta`, ...at, delta: SAY },
    { type: `${kind}.done`, ...at, [field]: SAY },
    ...(parts ? [{ type: `${parts.type}.done`, ...at, part: parts.part }] : []),
    itemDone(0, done),
  ];
}

const refusal = { type: 'message', id: 'msg_r', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal: SAY }] };
const summary = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: SAY }] };
const reasoning = { type: 'reasoning', id: 'rs_2', summary: [], content: [{ type: 'reasoning_text', text: SAY }] };
const custom = { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_1', name: 'shell', input: SAY, status: 'completed' };

/** Responses streams, each with a blocked term in one place. */
const RESPONSES: Record<string, [Event[], Event[]]> = {
  'a term split across two output_text parts': [streamedMessage(0, 'msg_1', HALVES), [message('msg_1', HALVES)]],
  'a term split across two message items': [[...streamedMessage(0, 'msg_1', [HALVES[0]]), ...streamedMessage(1, 'msg_2', [HALVES[1]])], [message('msg_1', [HALVES[0]]), message('msg_2', [HALVES[1]])]],
  'a refusal': [streamedItem({ ...refusal, content: [] }, refusal, 'response.refusal', 'refusal', { type: 'response.content_part', part: refusal.content[0], index: { content_index: 0 } }), [refusal]],
  'a reasoning summary': [streamedItem({ ...summary, summary: [] }, summary, 'response.reasoning_summary_text', 'text', { type: 'response.reasoning_summary_part', part: summary.summary[0], index: { summary_index: 0 } }), [summary]],
  'reasoning text': [streamedItem({ ...reasoning, content: [] }, reasoning, 'response.reasoning_text', 'text', { type: 'response.content_part', part: reasoning.content[0], index: { content_index: 0 } }), [reasoning]],
  'a custom tool call\'s input': [streamedItem({ ...custom, input: '' }, custom, 'response.custom_tool_call_input', 'input'), [custom]],
  'text already in output_item.added': [[added(0, message('msg_1', [SAY])), itemDone(0, message('msg_1', [SAY]))], [message('msg_1', [SAY])]],
  'text already in content_part.added': [[added(0, message('msg_1', [])), { type: 'response.content_part.added', item_id: 'msg_1', output_index: 0, content_index: 0, part: part(SAY) }, itemDone(0, message('msg_1', [SAY]))], [message('msg_1', [SAY])]],
  'text only in output_item.done': [[added(0, message('msg_1', [])), itemDone(0, message('msg_1', [SAY]))], [message('msg_1', [SAY])]],
  'text only in response.completed': [[], [message('msg_1', [SAY])]],
};

const block = (index: number, content: Event, deltas: Event[] = []): Event[] => [
  { type: 'content_block_start', index, content_block: content },
  ...deltas.map((delta) => ({ type: 'content_block_delta', index, delta })),
  { type: 'content_block_stop', index },
];
const citation = { type: 'char_location', cited_text: SAY, document_index: 0, document_title: 'Notes', start_char_index: 0, end_char_index: SAY.length };
const toolUse = (input: Event) => ({ type: 'tool_use', id: 'toolu_1', name: 'note', input });

/** Messages streams and their JSON answer's content, each with a blocked term in one place. */
const MESSAGES: Record<string, [Event[], Event[]]> = {
  'a term split across two text blocks': [[...block(0, { type: 'text', text: '' }, [{ type: 'text_delta', text: HALVES[0] }]), ...block(1, { type: 'text', text: '' }, [{ type: 'text_delta', text: HALVES[1] }])],
    HALVES.map((text) => ({ type: 'text', text }))],
  'text in content_block_start': [block(0, { type: 'text', text: SAY }), [{ type: 'text', text: SAY }]],
  'a tool call\'s input value in content_block_start': [block(0, toolUse({ note: SAY })), [toolUse({ note: SAY })]],
  'a tool call\'s input key': [block(0, toolUse({ [SAY]: 1 })), [toolUse({ [SAY]: 1 })]],
  'thinking': [block(0, { type: 'thinking', thinking: '', signature: '' }, [{ type: 'thinking_delta', thinking: SAY }, { type: 'signature_delta', signature: 'c2ln' }]),
    [{ type: 'thinking', thinking: SAY, signature: 'c2ln' }]],
  'a citation': [block(0, { type: 'text', text: '', citations: [] }, [{ type: 'citations_delta', citation }, { type: 'text_delta', text: 'As noted.' }]),
    [{ type: 'text', text: 'As noted.', citations: [citation] }]],
};

/** Where the text sits in a stream only: as a JSON answer these are plain text, checked before too. */
const STREAM_ONLY = new Set(['text already in output_item.added', 'text already in content_part.added', 'text only in output_item.done', 'text only in response.completed',
  'text in content_block_start', 'a tool call\'s input value in content_block_start']);
const jsonCases = (names: string[]) => names.map((name, i) => [name, i] as const).filter(([name]) => !STREAM_ONLY.has(name));

function eventsOf(raw: string): Event[] {
  return raw.split('\n\n').map((b) => b.split('\n').find((l) => l.startsWith('data: '))?.slice(6)).filter((d): d is string => d !== undefined).map((d) => JSON.parse(d));
}

describe('output rules read every text of a relayed Responses or Messages answer', () => {
  const alice = makeKey('alice');
  let backend: ScriptedBackend;
  const gateways: Record<string, TestGateway> = {};

  beforeAll(async () => {
    backend = await startScriptedBackend();
    const start = async (output?: object) => startGateway({
      keys: [alice.entry],
      upstreams: { resp: { url: backend.base, apis: ['responses'] }, msg: { url: backend.base, apis: ['messages'] } },
      routes: [{ model: 'rn-*', upstream: 'resp' }, { model: 'mn-*', upstream: 'msg' }],
      plugins: [{ name: 'content-filter', ...(output && { output }) }],
    });
    gateways.block = await start({ terms: ['project bluebird'] });
    gateways.mask = await start({ terms: ['project bluebird'], action: 'mask' });
    gateways.off = await start();
  });
  afterAll(async () => {
    await Promise.all(Object.values(gateways).map((g) => g.close()));
    await backend.close();
  });

  async function send(gw: string, path: string, model: string, stream: boolean): Promise<{ raw: string; events: Event[]; body: Event }> {
    const body = { model, stream, max_tokens: 100, ...(path === '/v1/responses' ? { input: 'Name it.' } : { messages: [{ role: 'user', content: 'Name it.' }] }) };
    const res = await call('POST', `${gateways[gw].url}${path}`, JSON.stringify(body), { 'content-type': 'application/json', 'x-request-id': randomUUID(), ...bearer(alice.key) });
    expect(res.status).toBe(200);
    return { raw: res.text, events: stream ? eventsOf(res.text) : [], body: res.body };
  }

  describe('Responses', () => {
    const names = Object.keys(RESPONSES);
    beforeAll(() => names.forEach((name, i) => backend.script(`rn-${i}`, responsesScript(...RESPONSES[name]))));

    it.each(names.map((name, i) => [name, i]))('never streams %s, and ends incomplete for content_filter', async (_name, i) => {
      const { raw, events } = await send('block', '/v1/responses', `rn-${i}`, true);
      expect(raw).not.toMatch(/bluebird/i);
      const last = events.at(-1)!;
      expect([last.type, last.response.incomplete_details?.reason]).toEqual(['response.incomplete', 'content_filter']);
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, n) => n));
      // The event cut reported the usage: it is charged, not an estimate.
      if (i === 9) expect(last.response.usage.output_tokens).toBe(USAGE.completion);
    });

    it.each(jsonCases(names))('never answers %s in JSON, and says incomplete for content_filter', async (_name, i) => {
      const { raw, body } = await send('block', '/v1/responses', `rn-${i}`, false);
      expect(raw).not.toMatch(/bluebird/i);
      expect([body.status, body.incomplete_details?.reason]).toEqual(['incomplete', 'content_filter']);
    });

    it.each([['output_item.done', 8], ['response.completed', 9]])('masks text only in %s, in every event that carries it', async (_name, i) => {
      const { raw, events } = await send('mask', '/v1/responses', `rn-${i}`, true);
      expect(raw).not.toMatch(/bluebird/i);
      expect(events.at(-1)!.response.output[0].content[0].text).toBe(MASKED);
      if (i === 8) expect(events.find((e) => e.type === 'response.output_item.done')!.item.content[0].text).toBe(MASKED);
      expect(events.at(-1)!.type).toBe('response.completed');
    });
  });

  describe('Messages', () => {
    const names = Object.keys(MESSAGES);
    beforeAll(() => names.forEach((name, i) => backend.script(`mn-${i}`, messagesScript(...MESSAGES[name]))));

    it.each(names.map((name, i) => [name, i]))('never streams %s, and stops for refusal', async (_name, i) => {
      const { raw, events } = await send('block', '/v1/messages', `mn-${i}`, true);
      expect(raw).not.toMatch(/bluebird/i);
      expect(events.find((e) => e.type === 'message_delta')!.delta.stop_reason).toBe('refusal');
      expect(events.at(-1)!.type).toBe('message_stop');
    });

    it.each(jsonCases(names))('never answers %s in JSON, and stops for refusal', async (_name, i) => {
      const { raw, body } = await send('block', '/v1/messages', `mn-${i}`, false);
      expect(raw).not.toMatch(/bluebird/i);
      expect(body.stop_reason).toBe('refusal');
    });
  });

  it('relays an answer with no match in any of these fields unchanged', async () => {
    // No part ends inside the beginning of the term, so nothing is held back.
    const clean = (e: unknown): unknown => JSON.parse(JSON.stringify(e).replaceAll('Project', 'Robin').replaceAll('Bluebird', 'Sparrow'));
    const without = (e: Event): string => JSON.stringify(e, (k, v) => (['id', 'item_id', 'created_at'].includes(k) ? undefined : v));
    const scripts: Array<[string, string]> = [];
    Object.values(RESPONSES).forEach(([events, output], i) => { backend.script(`rn-clean-${i}`, responsesScript(clean(events) as Event[], clean(output) as Event[])); scripts.push(['/v1/responses', `rn-clean-${i}`]); });
    Object.values(MESSAGES).forEach(([events, content], i) => { backend.script(`mn-clean-${i}`, messagesScript(clean(events) as Event[], clean(content) as Event[])); scripts.push(['/v1/messages', `mn-clean-${i}`]); });
    for (const [path, model] of scripts) {
      for (const stream of [true, false]) {
        const on = await send('block', path, model, stream);
        const off = await send('off', path, model, stream);
        expect(stream ? on.events.map(without) : without(on.body)).toEqual(stream ? off.events.map(without) : without(off.body));
      }
    }
  });
});
