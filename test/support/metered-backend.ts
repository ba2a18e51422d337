// A chat-completions backend (OpenAI's format) that meters what it serves, as
// a model server does: an answer of `words` tokens (one word each), cut at
// the request's max_tokens with finish_reason "length"; usage with
// prompt_tokens counted as the gateway estimates them (a quarter of the
// characters of the messages' text, rounded up), so a budget test measures
// the gateway's concurrency, not a tokenizer's disagreement; or, with
// `promptTokens: 'chars'`, one token a character, as a tokenizer counts
// Chinese (four times the estimate). JSON, or a
// stream of one event per token `gapMs` apart with usage in the last chunk.
// It keeps the usage of every answer it finished, and the max_tokens each
// request carried: the backend's own account of what was spent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startJsonServer } from './json-server';

export interface Served {
  maxTokens?: number;
  /** The request's `user` field, as forwarded. */
  user?: string;
  prompt: number;
  completion: number;
  finish: 'stop' | 'length';
  /** The client left before the answer's end: the usage is what was sent. */
  cut: boolean;
}

export interface MeteredBackend {
  base: string;
  served: Served[];
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function promptTokens(body: { messages?: Array<{ content?: unknown }> }, perChar: boolean): number {
  let chars = 0;
  for (const m of body.messages ?? []) if (typeof m.content === 'string') chars += m.content.length;
  return perChar ? chars : Math.ceil(chars / 4);
}

export async function startMeteredBackend({ words = 20, gapMs = 5, promptTokens: count = 'estimate' }: { words?: number; gapMs?: number; promptTokens?: 'estimate' | 'chars' } = {}): Promise<MeteredBackend> {
  const served: Served[] = [];

  async function handle(req: IncomingMessage, res: ServerResponse, body: any): Promise<void> {
    const maxTokens = Number.isInteger(body?.max_tokens) ? body.max_tokens as number : undefined;
    const n = Math.min(words, maxTokens ?? words);
    const finish = n < words ? 'length' : 'stop';
    const prompt = promptTokens(body, count === 'chars');
    const record: Served = { maxTokens, user: typeof body?.user === 'string' ? body.user : undefined, prompt, completion: 0, finish, cut: false };
    const usage = () => ({ prompt_tokens: prompt, completion_tokens: record.completion, total_tokens: prompt + record.completion });
    if (body?.stream !== true) {
      await sleep(gapMs * n);
      record.completion = n;
      served.push(record);
      const text = JSON.stringify({ id: 'cmpl-m', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(n).trim() }, finish_reason: finish }], usage: usage() });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    let gone = false;
    res.on('close', () => { if (!res.writableFinished) gone = true; });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: object, finishReason: string | null, extra: object = {}) =>
      `data: ${JSON.stringify({ id: 'cmpl-m', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;
    res.write(chunk({ role: 'assistant', content: '' }, null));
    for (let i = 0; i < n && !gone; i++) {
      await sleep(gapMs);
      if (gone) break;
      res.write(chunk({ content: 'word ' }, null));
      record.completion++;
    }
    record.cut = gone;
    served.push(record);
    if (gone) return;
    res.end(`${chunk({}, finish, { usage: usage() })}data: [DONE]\n\n`);
  }

  const server = await startJsonServer((req, res, body) => { void handle(req, res, body); });
  return { base: `${server.url}/v1`, served, close: () => server.close() };
}
