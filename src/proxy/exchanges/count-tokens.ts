// POST /v1/messages/count_tokens to a backend that serves the Messages API:
// the client's body as sent (the model renamed, the texts as a transform
// plugin left them) to <url>/messages/count_tokens with the client's
// anthropic-version and anthropic-beta, and the backend's own count relayed
// as it came. A count is not usage: its answer carries no usage, so nothing
// is charged, priced or counted as tokens.
//
//   ctx.source = new CountTokens(request); upstream.forward(ctx, COUNT_TOKENS_PATH, source.requestBody(ctx, model), source);
import type { Context, RequestSource } from '../../pipeline/context';
import type { ChatRequest } from '../../contract/types';
import type { CountTokensRequest } from '../../protocols/messages/request';
import { messagesTexts } from '../../protocols/messages/texts';
import { rewriteStrings } from '../../request/rewrite-strings';
import { badAnswer } from '../status';
import type { Format, JsonAnswer, StreamTransformer } from '../formats/format';
import { isRecord, parseBackendJson } from '../exchange';

export const COUNT_TOKENS_PATH = '/messages/count_tokens';

export class CountTokens implements Format, RequestSource {
  readonly path = COUNT_TOKENS_PATH;
  // As for /v1/messages: never pinned, the SDKs send different versions.
  readonly passHeaders = ['anthropic-version', 'anthropic-beta'];

  constructor(private request: CountTokensRequest) {}

  /** What the policy reads: every text the count sends (no conversation to route by, nothing generated). */
  view(): { chat: ChatRequest; texts: string[] } {
    const texts: string[] = [];
    messagesTexts(this.request, texts);
    return { chat: { model: this.request.model, messages: [], stream: false, model_params: {}, texts }, texts };
  }

  rewriteTexts(fn: (text: string) => string): boolean {
    const request = rewriteStrings(this.request, fn, false, true);
    if (request === this.request) return false;
    this.request = request;
    return true;
  }

  capOutput(): void {
    // A count generates nothing: there is no output to cap.
  }

  requestBody(_ctx: Context, upstreamModel: string): string {
    return JSON.stringify({ ...this.request, model: upstreamModel });
  }

  respondJson(_ctx: Context, text: string, upstream: string): JsonAnswer {
    const body = parseBackendJson(text, upstream);
    if (!isRecord(body) || !Number.isSafeInteger(body.input_tokens)) throw badAnswer(upstream, 'no input_tokens count');
    return { body: text, usage: undefined };
  }

  streamTransformer(_ctx: Context, upstream: string): StreamTransformer {
    // The request never asks for a stream, and the call refuses an event stream to a request without one.
    throw badAnswer(upstream, 'an event stream to count_tokens');
  }
}
