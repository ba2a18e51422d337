// format: native — the backend speaks this same interface. The body goes with
// only the model renamed; the answer's bytes come back untouched (but for
// what output rules mask or cut). Usage is read from the passing data
// without changing it.
import type { Context } from '../../pipeline/context';
import { badAnswer } from '../status';
import { estimateUsage, publicUsage, readUsage } from '../../request/usage';
import type { Usage } from '../../contract/plugin';
import { toUnixSeconds, type Format, type JsonAnswer, type StreamTransformer } from './format';
import { chatOutputOf, checkChatAnswer } from '../../output-rules/answers';
import type { ChatOutput } from '../../output-rules/chat';

function nativeBody(ctx: Context, upstreamModel: string): string {
  if (ctx.image) {
    const { model_params } = ctx.image;
    return JSON.stringify({ model: upstreamModel, prompt: ctx.image.prompt, ...(Object.keys(model_params).length ? { model_params } : {}) });
  }
  const chat = ctx.chat!;
  // stream_options is the gateway's business: a streamed answer always ends with usage.
  const { stream_options: _, ...model_params } = chat.model_params;
  return JSON.stringify({
    model: upstreamModel,
    messages: chat.messages,
    ...(chat.stream ? { stream: true } : {}),
    ...(Object.keys(model_params).length ? { model_params } : {}),
  });
}

function respondJson(ctx: Context, text: string, upstream: string): JsonAnswer {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    throw badAnswer(upstream, 'the body is not JSON');
  }
  // An image answer has no completion text: without reported usage, the prompt's estimate is charged.
  let chars = 0;
  if (ctx.chat && Array.isArray(body?.choices)) for (const c of body.choices) chars += typeof c?.message?.content === 'string' ? c.message.content.length : 0;
  const usage = readUsage(body?.usage) ?? estimateUsage(ctx, chars);
  if (ctx.forwarding.output === undefined || !ctx.chat) return { body: text, usage };
  checkChatAnswer(ctx, body);
  return { body: JSON.stringify(body), usage };
}

class NativeStream implements StreamTransformer {
  done = false;
  /** What the answer cost as far as this transformer knows (see StreamTransformer.usage); the relay records it. */
  usage?: Usage;
  /** A rule cut the answer: the rest of the backend's stream is read only for its usage. */
  cutting = false;
  private readonly started = new Set<number>();
  private readonly finished = new Set<number>();
  private readonly output?: ChatOutput;
  private id?: unknown;
  private created?: unknown;

  constructor(private readonly ctx: Context, private readonly upstream: string) {
    this.output = chatOutputOf(ctx);
  }

  push(data: string, emit: (payload: string) => void): void {
    if (data === '[DONE]') {
      if (this.cutting) return;
      const tails = this.output?.endAll() ?? [];
      if (tails.length > 0) emit(this.chunk(tails.map(([index, delta]) => ({ index, delta, finish_reason: null }))));
      this.done = true;
      this.usage ??= estimateUsage(this.ctx, this.ctx.forwarding.streamedChars);
      emit(data);
      return;
    }
    let chunk: any;
    try {
      chunk = JSON.parse(data);
    } catch {
      // Not ours to judge: native data passes through as the backend sent it.
      return emit(data);
    }
    // The gateway writes the stream's one error event, so the client sees exactly one.
    if (chunk?.error) throw badAnswer(this.upstream, 'the backend reported an error mid-stream', true);
    const usage = readUsage(chunk?.usage);
    if (usage) this.usage = usage;
    if (this.cutting) return;
    this.id ??= chunk?.id;
    this.created ??= chunk?.created;
    let changed = false;
    // Read defensively: the bytes are the backend's to send, a shape we cannot count is simply not counted.
    if (Array.isArray(chunk?.choices)) {
      for (const c of chunk.choices) {
        const index = Number.isInteger(c?.index) ? c.index : 0;
        this.started.add(index);
        if (typeof c?.finish_reason === 'string') this.finished.add(index);
        if (typeof c?.delta?.content === 'string') this.ctx.forwarding.streamedChars += c.delta.content.length;
        if (this.output === undefined || c === null || typeof c !== 'object') continue;
        const delta = this.output.delta(index, c.delta ?? {}, typeof c.finish_reason === 'string');
        if (delta !== c.delta) { c.delta = delta; changed = true; }
        if (this.output.blocked) {
          // The cut choice ends in endCut, as the filter ended it, whatever the backend said.
          if (c.finish_reason !== null && c.finish_reason !== undefined) { c.finish_reason = null; changed = true; }
          this.finished.delete(index);
          chunk.choices = chunk.choices.slice(0, chunk.choices.indexOf(c) + 1);
          break;
        }
      }
    }
    emit(changed ? JSON.stringify(chunk) : data);
    if (this.output?.blocked) this.cutting = true;
  }

  /** Ends an answer a rule cut: a last chunk whose choices end with content_filter, with the usage, then [DONE]. */
  endCut(emit: (payload: string) => void): void {
    this.usage ??= estimateUsage(this.ctx, this.ctx.forwarding.streamedChars);
    const indexes = [...this.started].filter((index) => !this.finished.has(index));
    emit(this.chunk((indexes.length > 0 ? indexes : [0]).map((index) => ({ index, delta: {}, finish_reason: 'content_filter' })), publicUsage(this.usage)));
    this.done = true;
    emit('[DONE]');
  }

  private chunk(choices: unknown[], usage?: object): string {
    const id = typeof this.id === 'string' ? this.id : `chatcmpl-${this.ctx.id}`;
    return JSON.stringify({ id, object: 'chat.completion.chunk', created: toUnixSeconds(this.created), model: this.ctx.model, choices, ...(usage ? { usage } : {}) });
  }

  finishIfComplete(emit: (payload: string) => void): boolean {
    if (this.cutting) return false;
    if (this.started.size === 0 || [...this.started].some((index) => !this.finished.has(index))) return false;
    this.push('[DONE]', emit);
    return true;
  }
}

export const nativeFormat: Format = {
  requestBody: nativeBody,
  respondJson,
  streamTransformer: (ctx, upstream) => new NativeStream(ctx, upstream),
};
