// A backend on loopback that answers with a given text cut into a given
// number of stream deltas, in each wire protocol a backend speaks: chat
// completions (the openai and the interface's native format alike), the
// Responses API's events and the Messages API's events, or as a JSON answer
// of each. For output rules: a term split across 2, 3 or 10 deltas. The
// model name says how: "<anything>-split<N>" cuts the whole text into N
// deltas; "<anything>-term-split<N>" (on a backend started with a term) sends
// the text before the term as one delta, the term itself in exactly N, and
// the rest as one; "-tool" for the text as a tool call's arguments instead
// of content, and "-paced" for 5 ms between events (the usage then comes
// after a cut has ended the client's stream). Usage reported: USAGE
// (prompt 7, completion 42). Every request is recorded.
//
//   const b = await startSplitBackend('We call it Project Bluebird today.', 'Project Bluebird');
//   upstreams: { chat: { url: b.base, format: 'openai' }, resp: { url: b.base, apis: ['responses'] } }
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startRecordingServer, type RecordedRequest } from './json-server';

export const USAGE = { prompt: 7, completion: 42 };

export interface SplitBackend {
  base: string;
  requests: RecordedRequest[];
  /** The requests to a path ending so, in order. */
  to(suffix: string): RecordedRequest[];
  close(): Promise<void>;
}

/** `text` cut into `n` pieces of about the same length. */
export const splitText = (text: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => text.slice(Math.floor((i * text.length) / n), Math.floor(((i + 1) * text.length) / n))).filter((p) => p !== '');

/** `text` as the deltas "-term-split<n>" sends: what comes before `term`, the term in exactly `n` pieces (n at most its length), what comes after. */
function splitTerm(text: string, term: string, n: number): string[] {
  const at = text.indexOf(term);
  if (at === -1 || n < 1 || n > term.length) throw new Error(`cannot split "${term}" of "${text}" into ${n} pieces`);
  return [text.slice(0, at), ...splitText(term, n), text.slice(at + term.length)].filter((p) => p !== '');
}

interface Shape { pieces: string[]; tool: boolean; paced: boolean }

function shapeOf(model: string, text: string, term: string | undefined): Shape {
  const termSplit = /-term-split(\d+)/.exec(model);
  if (termSplit !== null && term === undefined) throw new Error(`model ${model}: this backend was started without a term`);
  return {
    pieces: termSplit !== null ? splitTerm(text, term!, Number(termSplit[1])) : splitText(text, Number(/-split(\d+)/.exec(model)?.[1] ?? 1)),
    tool: model.includes('-tool'),
    paced: model.includes('-paced'),
  };
}

const ARGS_PREFIX = '{"note":"';
const argsOf = (text: string): string => `${ARGS_PREFIX}${text}"}`;

function chatEvents(model: string, s: Shape): unknown[] {
  const base = { id: 'chatcmpl-split', object: 'chat.completion.chunk', created: 1_700_000_000, model };
  const delta = (d: object, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta: d, finish_reason: finish }] });
  const pieces = s.tool ? [ARGS_PREFIX, ...s.pieces, '"}'] : s.pieces;
  return [
    ...pieces.map((p, i) => (s.tool
      ? delta({ ...(i === 0 ? { role: 'assistant' } : {}), tool_calls: [{ index: 0, ...(i === 0 ? { id: 'call_1', type: 'function', function: { name: 'note', arguments: p } } : { function: { arguments: p } }) }] })
      : delta({ ...(i === 0 ? { role: 'assistant' } : {}), content: p }))),
    delta({}, s.tool ? 'tool_calls' : 'stop'),
    { ...base, choices: [], usage: { prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion, total_tokens: USAGE.prompt + USAGE.completion } },
    '[DONE]',
  ];
}

function chatJson(model: string, text: string, tool: boolean): unknown {
  const message = tool ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'note', arguments: argsOf(text) } }] } : { role: 'assistant', content: text };
  return { id: 'chatcmpl-split', object: 'chat.completion', created: 1_700_000_000, model, choices: [{ index: 0, message, finish_reason: tool ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion, total_tokens: USAGE.prompt + USAGE.completion } };
}

const responsesUsage = { input_tokens: USAGE.prompt, input_tokens_details: { cached_tokens: 0 }, output_tokens: USAGE.completion, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: USAGE.prompt + USAGE.completion };

function responsesItem(text: string, tool: boolean): Record<string, unknown> {
  return tool
    ? { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'note', arguments: argsOf(text), status: 'completed' }
    : { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
}

function responsesEvents(model: string, text: string, s: Shape): unknown[] {
  const response = { id: 'resp_backend', object: 'response', created_at: 1_700_000_000, model, status: 'in_progress', output: [], usage: null, error: null, incomplete_details: null };
  const item = responsesItem(text, s.tool);
  const at = { item_id: item.id, output_index: 0 };
  const events: Array<Record<string, unknown>> = [
    { type: 'response.created', response }, { type: 'response.in_progress', response },
    { type: 'response.output_item.added', output_index: 0, item: s.tool ? { ...item, arguments: '', status: 'in_progress' } : { ...item, content: [], status: 'in_progress' } },
  ];
  if (s.tool) {
    for (const delta of [ARGS_PREFIX, ...s.pieces, '"}']) events.push({ type: 'response.function_call_arguments.delta', ...at, delta });
    events.push({ type: 'response.function_call_arguments.done', ...at, arguments: argsOf(text) });
  } else {
    events.push({ type: 'response.content_part.added', ...at, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (const delta of s.pieces) events.push({ type: 'response.output_text.delta', ...at, content_index: 0, delta, logprobs: [] });
    events.push({ type: 'response.output_text.done', ...at, content_index: 0, text, logprobs: [] });
    events.push({ type: 'response.content_part.done', ...at, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
  }
  events.push({ type: 'response.output_item.done', output_index: 0, item });
  events.push({ type: 'response.completed', response: { ...response, status: 'completed', output: [item], usage: responsesUsage } });
  return events.map((e, i) => ({ ...e, sequence_number: i }));
}

const messagesUsage = { input_tokens: USAGE.prompt, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: USAGE.completion };

function messageJson(model: string, text: string, tool: boolean): Record<string, unknown> {
  const content = tool ? [{ type: 'tool_use', id: 'toolu_1', name: 'note', input: { note: text } }] : [{ type: 'text', text }];
  return { id: 'msg_backend', type: 'message', role: 'assistant', model, content, stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null, usage: messagesUsage };
}

function messagesEvents(model: string, text: string, s: Shape): unknown[] {
  const start = { ...messageJson(model, text, s.tool), content: [], stop_reason: null, usage: { ...messagesUsage, output_tokens: 1 } };
  const block = s.tool ? { type: 'tool_use', id: 'toolu_1', name: 'note', input: {} } : { type: 'text', text: '' };
  const deltas = s.tool
    ? [ARGS_PREFIX, ...s.pieces, '"}'].map((partial_json) => ({ type: 'input_json_delta', partial_json }))
    : s.pieces.map((t) => ({ type: 'text_delta', text: t }));
  return [
    { type: 'message_start', message: start }, { type: 'ping' },
    { type: 'content_block_start', index: 0, content_block: block },
    ...deltas.map((delta) => ({ type: 'content_block_delta', index: 0, delta })),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: s.tool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: USAGE.completion } },
    { type: 'message_stop' },
  ];
}

/** An SSE frame: a protocol's named events with their `event:` line, chat chunks and [DONE] as data only. */
const frame = (e: unknown): string => {
  if (typeof e === 'string') return `data: ${e}\n\n`;
  const type = (e as { type?: unknown }).type;
  return `${typeof type === 'string' ? `event: ${type}\n` : ''}data: ${JSON.stringify(e)}\n\n`;
};

function sendJson(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

async function stream(res: ServerResponse, events: unknown[], paced: boolean): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  if (!paced) return void res.end(events.map(frame).join(''));
  for (const e of events) {
    if (res.destroyed) return;
    res.write(frame(e));
    await new Promise((r) => setTimeout(r, 5));
  }
  res.end();
}

/** `term`: a part of `text` that "-term-split<N>" models cut into N deltas of their own. */
export async function startSplitBackend(text: string, term?: string): Promise<SplitBackend> {
  if (term !== undefined) splitTerm(text, term, 1);
  const handle = (req: IncomingMessage, res: ServerResponse, body: any): void => {
    const path = (req.url ?? '').split('?')[0];
    const model = String(body?.model ?? '');
    let s: Shape;
    try {
      s = shapeOf(model, text, term);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      return void res.end((err as Error).message);
    }
    const streamed = body?.stream === true;
    if (path.endsWith('/responses')) return void (streamed ? stream(res, responsesEvents(model, text, s), s.paced) : sendJson(res, (responsesEvents(model, text, s).at(-1) as { response: unknown }).response));
    if (path.endsWith('/messages')) return void (streamed ? stream(res, messagesEvents(model, text, s), s.paced) : sendJson(res, messageJson(model, text, s.tool)));
    return void (streamed ? stream(res, chatEvents(model, s), s.paced) : sendJson(res, chatJson(model, text, s.tool)));
  };
  const server = await startRecordingServer(handle);
  return { base: server.base, requests: server.requests, to: (suffix) => server.requests.filter((r) => r.url.split('?')[0].endsWith(suffix)), close: server.close };
}
