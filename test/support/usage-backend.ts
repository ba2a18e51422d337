// One loopback backend that serves chat completions (OpenAI's format and the
// service interface's own), the Responses API and the Messages API, and
// reports the same usage in each protocol's words: a prompt of 1,200 tokens,
// 400 of them read from the prompt cache, and 345 completion tokens, 120 of
// them reasoning. JSON, or a short stream with the usage where each protocol
// puts it (chat: a last usage-only chunk; Responses: response.completed;
// Messages: message_start and message_delta). So a test prices one usage on
// every path the gateway reads it.
// POST /v1/messages/count_tokens counts COUNTED tokens; the model picks a refusal:
//   refuse-count   400 invalid_request_error (Anthropic's shape)
//   busy-count     429 rate_limit_error, Retry-After: 1
// Usage:
//   const backend = await startUsageBackend();
//   upstreams: { m: { url: backend.base, format: 'openai', apis: ['chat', 'messages'] } }
import type { ServerResponse } from 'node:http';
import { startRecordingServer, type RecordingServer } from './json-server';

export const USAGE = { prompt: 1200, cached: 400, completion: 345, reasoning: 120 } as const;
export const COUNTED = 1003;

const chatUsage = {
  prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion, total_tokens: USAGE.prompt + USAGE.completion,
  prompt_tokens_details: { cached_tokens: USAGE.cached }, completion_tokens_details: { reasoning_tokens: USAGE.reasoning },
};
const responsesUsage = {
  input_tokens: USAGE.prompt, input_tokens_details: { cached_tokens: USAGE.cached },
  output_tokens: USAGE.completion, output_tokens_details: { reasoning_tokens: USAGE.reasoning }, total_tokens: USAGE.prompt + USAGE.completion,
};
/** Anthropic's input_tokens leaves out the tokens read from the cache. */
const messagesUsage = {
  input_tokens: USAGE.prompt - USAGE.cached, cache_read_input_tokens: USAGE.cached, cache_creation_input_tokens: 0,
  output_tokens: USAGE.completion, output_tokens_details: { thinking_tokens: USAGE.reasoning },
};

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function sse(res: ServerResponse, events: ReadonlyArray<Record<string, unknown> | string>, named: boolean): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const frame = (e: Record<string, unknown> | string) => (typeof e === 'string' ? `data: ${e}\n\n`
    : `${named ? `event: ${String(e.type)}\n` : ''}data: ${JSON.stringify(e)}\n\n`);
  res.end(events.map(frame).join(''));
}

function chat(res: ServerResponse, body: any): void {
  const head = { id: 'chatcmpl-u', created: 1, model: body.model };
  if (body.stream !== true) {
    return json(res, 200, { ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: chatUsage });
  }
  const chunk = (choices: unknown[], extra: object = {}) => ({ ...head, object: 'chat.completion.chunk', choices, ...extra });
  sse(res, [
    chunk([{ index: 0, delta: { role: 'assistant', content: 'ok' }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
    chunk([], { usage: chatUsage }),
    '[DONE]',
  ], false);
}

function responses(res: ServerResponse, body: any): void {
  const base = { id: 'resp_u', object: 'response', created_at: 1, model: body.model, error: null, incomplete_details: null };
  const item = { type: 'message', id: 'msg_u', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] };
  const done = { ...base, status: 'completed', output: [item], usage: responsesUsage };
  if (body.stream !== true) return json(res, 200, done);
  const at = { item_id: 'msg_u', output_index: 0, content_index: 0 };
  sse(res, [
    { type: 'response.created', response: { ...base, status: 'in_progress', output: [], usage: null } },
    { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } },
    { type: 'response.output_text.delta', ...at, delta: 'ok' },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: done },
  ].map((e, i) => ({ ...e, sequence_number: i })), true);
}

function messages(res: ServerResponse, body: any): void {
  const base = { id: 'msg_u', type: 'message', role: 'assistant', model: body.model, stop_sequence: null };
  if (body.stream !== true) return json(res, 200, { ...base, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: messagesUsage });
  const { output_tokens: _o, output_tokens_details: _d, ...input } = messagesUsage;
  sse(res, [
    { type: 'message_start', message: { ...base, content: [], stop_reason: null, usage: { ...input, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: USAGE.completion, output_tokens_details: { thinking_tokens: USAGE.reasoning } } },
    { type: 'message_stop' },
  ], true);
}

const anthropicError = (type: string, message: string) => ({ type: 'error', error: { type, message } });

function countTokens(res: ServerResponse, body: any): void {
  if (body.model === 'refuse-count') return json(res, 400, anthropicError('invalid_request_error', 'messages: at least one message is required'));
  if (body.model === 'busy-count') return json(res, 429, anthropicError('rate_limit_error', 'Number of requests has exceeded your rate limit'), { 'retry-after': '1' });
  json(res, 200, { input_tokens: COUNTED });
}

export function startUsageBackend(): Promise<RecordingServer> {
  return startRecordingServer((req, res, body) => {
    const path = req.url ?? '';
    if (path.endsWith('/chat/completions')) return chat(res, body);
    if (path.endsWith('/responses')) return responses(res, body);
    if (path.endsWith('/messages/count_tokens')) return countTokens(res, body);
    if (path.endsWith('/messages')) return messages(res, body);
    json(res, 404, { error: { message: `no ${path}` } });
  });
}
