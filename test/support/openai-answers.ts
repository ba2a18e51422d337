// What the stand-in OpenAI-compatible model answers, and the exact objects
// OpenAI sends for it: a chat.completion, or the chat.completion.chunk
// sequence of a stream. Kept apart from the HTTP server so the shapes can be
// read in one place.
import { sampleFromSchema } from './json-from-schema';

/** The plain answer, and its usage, for tests that assert exact text and counts. */
export const PLAIN_REPLY = 'Hello from the backend.';
export const PROMPT_TOKENS = 12;
export const FINGERPRINT = 'fp_sluice_test';

/** OpenAI-like tokens: a word with its leading space, or a run of punctuation. */
export const tokenize = (text: string): string[] => text.match(/\s*\w+|\s*[^\w\s]+/g) ?? [];

export const PLAIN_USAGE = { prompt_tokens: PROMPT_TOKENS, completion_tokens: tokenize(PLAIN_REPLY).length, total_tokens: PROMPT_TOKENS + tokenize(PLAIN_REPLY).length };

export type Answer =
  | { kind: 'text'; text: string; tokens: string[] }
  | { kind: 'tool'; id: string; name: string; arguments: string; fragments: string[] };

let calls = 0;

/** A tool call when the client offers tools and the user just spoke; else text (the tool's result, JSON, or the plain reply). */
export function answerFor(body: any): Answer {
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  const tool = pickTool(body);
  if (tool && last?.role === 'user') {
    const args = JSON.stringify(sampleFromSchema(tool.function.parameters ?? { type: 'object' }));
    const third = Math.ceil(args.length / 3);
    const fragments = [args.slice(0, third), args.slice(third, 2 * third), args.slice(2 * third)].filter((f) => f.length > 0);
    return { kind: 'tool', id: `call_${String(++calls).padStart(4, '0')}`, name: tool.function.name, arguments: args, fragments };
  }
  const text = last?.role === 'tool' ? `The tool said: ${textOf(last.content)}` : jsonReply(body.response_format) ?? PLAIN_REPLY;
  return { kind: 'text', text, tokens: tokenize(text) };
}

function pickTool(body: any): any {
  const tools: any[] = Array.isArray(body.tools) ? body.tools.filter((t: any) => t?.type === 'function') : [];
  const choice = body.tool_choice;
  if (tools.length === 0 || choice === 'none') return undefined;
  const named = choice?.function?.name;
  return tools.find((t) => t.function?.name === named) ?? tools[0];
}

function jsonReply(format: any): string | undefined {
  if (format?.type === 'json_schema') return JSON.stringify(sampleFromSchema(format.json_schema?.schema ?? { type: 'object' }));
  if (format?.type === 'json_object') return JSON.stringify({ answer: 'example' });
  return undefined;
}

const textOf = (content: unknown): string => (Array.isArray(content) ? content.map((p: any) => p?.text ?? '').join('') : String(content ?? ''));

function usageOf(answer: Answer, n: number) {
  const completion = (answer.kind === 'text' ? answer.tokens.length : answer.fragments.length + 1) * n;
  return {
    prompt_tokens: PROMPT_TOKENS,
    completion_tokens: completion,
    total_tokens: PROMPT_TOKENS + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function logprobEntry(token: string, i: number, top: number) {
  const bytes = (t: string) => [...Buffer.from(t, 'utf8')];
  const logprob = -0.01 * (i + 1);
  const alternatives = Array.from({ length: top }, (_, k) => (k === 0 ? { token, logprob, bytes: bytes(token) } : { token: ` alt${k}`, logprob: logprob - k, bytes: bytes(` alt${k}`) }));
  return { token, logprob, bytes: bytes(token), top_logprobs: alternatives };
}

interface Shape { id: string; created: number; model: string; n: number; logprobs: boolean; top: number; serviceTier: string }

function shapeOf(body: any, id: string): Shape {
  return {
    id,
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    n: Number.isInteger(body.n) && body.n > 0 ? body.n : 1,
    logprobs: body.logprobs === true,
    top: Number.isInteger(body.top_logprobs) ? body.top_logprobs : 0,
    serviceTier: typeof body.service_tier === 'string' && body.service_tier !== 'auto' ? body.service_tier : 'default',
  };
}

const finishOf = (answer: Answer) => (answer.kind === 'tool' ? 'tool_calls' : 'stop');

export function completionJson(body: any, answer: Answer, id: string): Record<string, unknown> {
  const s = shapeOf(body, id);
  const message = answer.kind === 'tool'
    ? { role: 'assistant', content: null, refusal: null, annotations: [], tool_calls: [{ id: answer.id, type: 'function', function: { name: answer.name, arguments: answer.arguments } }] }
    : { role: 'assistant', content: answer.text, refusal: null, annotations: [] };
  const logprobs = s.logprobs && answer.kind === 'text' ? { content: answer.tokens.map((t, i) => logprobEntry(t, i, s.top)), refusal: null } : null;
  return {
    id: s.id, object: 'chat.completion', created: s.created, model: s.model,
    choices: Array.from({ length: s.n }, (_, index) => ({ index, message, logprobs, finish_reason: finishOf(answer) })),
    usage: usageOf(answer, s.n),
    service_tier: s.serviceTier,
    system_fingerprint: FINGERPRINT,
  };
}

/** The stream's events in order, as OpenAI sends them: one choice per chunk, finish, optional usage-only chunk, [DONE]. */
export function completionChunks(body: any, answer: Answer, id: string): string[] {
  const s = shapeOf(body, id);
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (choices: unknown[], usage: unknown = null) => JSON.stringify({
    id: s.id, object: 'chat.completion.chunk', created: s.created, model: s.model, service_tier: s.serviceTier,
    system_fingerprint: FINGERPRINT, choices, ...(includeUsage ? { usage } : {}),
  });
  const choice = (index: number, delta: unknown, logprobs: unknown = null, finish: string | null = null) => ({ index, delta, logprobs, finish_reason: finish });
  const indexes = Array.from({ length: s.n }, (_, i) => i);
  const events: string[] = [];
  for (const index of indexes) {
    if (answer.kind === 'tool') {
      const call = { index: 0, id: answer.id, type: 'function', function: { name: answer.name, arguments: '' } };
      events.push(chunk([choice(index, { role: 'assistant', content: null, tool_calls: [call], refusal: null })]));
    } else {
      events.push(chunk([choice(index, { role: 'assistant', content: '', refusal: null }, s.logprobs ? { content: [], refusal: null } : null)]));
    }
  }
  const steps = answer.kind === 'tool' ? answer.fragments : answer.tokens;
  steps.forEach((piece, i) => {
    for (const index of indexes) {
      if (answer.kind === 'tool') events.push(chunk([choice(index, { tool_calls: [{ index: 0, function: { arguments: piece } }] })]));
      else events.push(chunk([choice(index, { content: piece }, s.logprobs ? { content: [logprobEntry(piece, i, s.top)], refusal: null } : null)]));
    }
  });
  for (const index of indexes) events.push(chunk([choice(index, {}, null, finishOf(answer))]));
  if (includeUsage) events.push(chunk([], usageOf(answer, s.n)));
  events.push('[DONE]');
  return events;
}
