// format: openai — vLLM, OpenAI and compatible servers. model_params become
// top-level OpenAI fields; answers are reshaped into the interface's objects:
// the client's model id, integer `created`, one id per stream, `delta.role`
// in the first chunk, and the backend's usage-only chunk folded into a last
// chunk with an empty delta, the finish reasons and usage.
import { randomUUID } from 'node:crypto';
import type { Context } from '../../pipeline/context';
import { badAnswer } from '../status';
import { estimateUsage, publicUsage, readUsage } from '../usage';
import { toUnixSeconds, withoutNulls, type Format, type StreamTransformer } from './format';

const newId = (prefix: string): string => `${prefix}-${randomUUID().replace(/-/g, '')}`;

function openaiBody(ctx: Context, upstreamModel: string): string {
  if (ctx.image) {
    return JSON.stringify({ ...withoutNulls(ctx.image.model_params), model: upstreamModel, prompt: ctx.image.prompt });
  }
  const chat = ctx.chat!;
  const body: Record<string, unknown> = { ...withoutNulls(chat.model_params), model: upstreamModel, messages: chat.messages };
  if (chat.stream) {
    body.stream = true;
    body.stream_options = { ...(body.stream_options as object | undefined), include_usage: true };
  } else {
    delete body.stream;
    delete body.stream_options;
  }
  return JSON.stringify(body);
}

function parseJson(text: string, upstream: string): any {
  try {
    return JSON.parse(text);
  } catch {
    throw badAnswer(upstream, 'the body is not JSON');
  }
}

function respondJson(ctx: Context, text: string, upstream: string): string {
  const body = parseJson(text, upstream);
  if (ctx.image) {
    if (!Array.isArray(body?.data) || body.data.some((d: any) => typeof d?.url !== 'string')) throw badAnswer(upstream, 'no image URLs in data[]');
    ctx.usage = readUsage(body.usage) ?? estimateUsage(ctx, 0);
    return JSON.stringify({ id: typeof body.id === 'string' ? body.id : newId('img'), created: toUnixSeconds(body.created), data: body.data.map((d: any) => ({ url: d.url })) });
  }
  if (!Array.isArray(body?.choices)) throw badAnswer(upstream, 'no choices[]');
  let chars = 0;
  const choices = body.choices.map((c: any, i: number) => {
    const message = { ...c?.message, role: c?.message?.role ?? 'assistant', content: c?.message?.content ?? null };
    if (typeof message.content === 'string') chars += message.content.length;
    return { index: Number.isInteger(c?.index) ? c.index : i, message, finish_reason: c?.finish_reason ?? 'stop' };
  });
  ctx.usage = readUsage(body.usage) ?? estimateUsage(ctx, chars);
  return JSON.stringify({
    id: typeof body.id === 'string' ? body.id : newId('chatcmpl'),
    object: 'chat.completion',
    created: toUnixSeconds(body.created),
    model: ctx.model,
    choices,
    usage: publicUsage(ctx.usage),
  });
}

class OpenAIStream implements StreamTransformer {
  done = false;
  private id?: string;
  private created = 0;
  private readonly started = new Set<number>();
  private readonly finish = new Map<number, string>();

  constructor(private readonly ctx: Context, private readonly upstream: string) {}

  push(data: string, emit: (payload: string) => void): void {
    if (data === '[DONE]') {
      this.done = true;
      emit(this.lastChunk());
      emit('[DONE]');
      return;
    }
    let chunk: any;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw badAnswer(this.upstream, 'an event is not JSON', true);
    }
    if (chunk === null || typeof chunk !== 'object') throw badAnswer(this.upstream, 'an event is not a JSON object', true);
    if (chunk.error) throw badAnswer(this.upstream, 'the backend reported an error mid-stream', true);
    if (this.id === undefined) {
      this.id = typeof chunk.id === 'string' ? chunk.id : newId('chatcmpl');
      this.created = toUnixSeconds(chunk.created);
    }
    const usage = readUsage(chunk.usage);
    if (usage) this.ctx.usage = usage;
    const out: unknown[] = [];
    for (const c of Array.isArray(chunk.choices) ? chunk.choices : []) {
      const index = Number.isInteger(c?.index) ? c.index : 0;
      if (typeof c?.finish_reason === 'string') this.finish.set(index, c.finish_reason);
      const delta = c?.delta ?? {};
      const content = delta.content;
      if (typeof content === 'string') this.ctx.streamedChars += content.length;
      const first = !this.started.has(index);
      if (!first && !(typeof content === 'string' && content.length > 0) && !hasOtherFields(delta)) continue;
      if (first) this.started.add(index);
      out.push({ index, delta: first ? { role: 'assistant', ...delta } : delta, finish_reason: null });
    }
    if (out.length > 0) emit(this.chunk(out));
  }

  private chunk(choices: unknown[], usage?: object): string {
    return JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.ctx.model, choices, ...(usage ? { usage } : {}) });
  }

  private lastChunk(): string {
    this.id ??= newId('chatcmpl');
    this.created ||= toUnixSeconds(undefined);
    this.ctx.usage ??= estimateUsage(this.ctx, this.ctx.streamedChars);
    const indexes = this.finish.size > 0 ? [...this.finish.keys()].sort((a, b) => a - b) : [...this.started].sort((a, b) => a - b);
    const choices = (indexes.length > 0 ? indexes : [0]).map((index) => ({ index, delta: {}, finish_reason: this.finish.get(index) ?? 'stop' }));
    return this.chunk(choices, publicUsage(this.ctx.usage));
  }
}

function hasOtherFields(delta: Record<string, unknown>): boolean {
  for (const key in delta) if (key !== 'role' && key !== 'content' && delta[key] !== null && delta[key] !== undefined) return true;
  return false;
}

export const openaiFormat: Format = {
  requestBody: openaiBody,
  respondJson,
  streamTransformer: (ctx, upstream) => new OpenAIStream(ctx, upstream),
};
