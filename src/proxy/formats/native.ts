// format: native — the backend speaks this same interface. The body goes with
// only the model renamed; the answer's bytes come back untouched. Usage is read
// from the passing data without changing it.
import type { Context } from '../../pipeline/context';
import { badAnswer } from '../status';
import { estimateUsage, readUsage } from '../usage';
import type { Format, JsonAnswer, StreamTransformer } from './format';

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
  return { body: text, usage: readUsage(body?.usage) ?? estimateUsage(ctx, chars) };
}

class NativeStream implements StreamTransformer {
  done = false;
  private readonly started = new Set<number>();
  private readonly finished = new Set<number>();

  constructor(private readonly ctx: Context, private readonly upstream: string) {}

  push(data: string, emit: (payload: string) => void): void {
    if (data === '[DONE]') {
      this.done = true;
      this.ctx.usage ??= estimateUsage(this.ctx, this.ctx.forwarding.streamedChars);
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
    // Read defensively: the bytes are the backend's to send, a shape we cannot count is simply not counted.
    if (Array.isArray(chunk?.choices)) {
      for (const c of chunk.choices) {
        const index = Number.isInteger(c?.index) ? c.index : 0;
        this.started.add(index);
        if (typeof c?.finish_reason === 'string') this.finished.add(index);
        if (typeof c?.delta?.content === 'string') this.ctx.forwarding.streamedChars += c.delta.content.length;
      }
    }
    const usage = readUsage(chunk?.usage);
    if (usage) this.ctx.usage = usage;
    emit(data);
  }

  finishIfComplete(emit: (payload: string) => void): boolean {
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
