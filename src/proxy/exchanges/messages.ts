// A Messages API request (POST /v1/messages) on its way to an upstream:
// relayed as sent to a backend that serves the API (apis: [messages]), with
// the model renamed and the client's anthropic-version and anthropic-beta
// passed on; otherwise translated to chat completions (the request view is
// already the translation: ctx.chat) and answered as a message or its
// stream of events, with a ping while the backend is silent.
import { randomBytes } from 'node:crypto';
import type { Context, RequestSource } from '../../pipeline/context';
import type { ChatRequest } from '../../contract/types';
import type { MessagesRequest } from '../../protocols/messages/request';
import { messagesTexts } from '../../protocols/messages/texts';
import { toChat, type ToChatOptions } from '../../protocols/messages/to-chat';
import { rewriteStrings } from '../../request/rewrite-strings';
import { fromChatJson, type AnswerMeta } from '../../protocols/messages/from-chat';
import { MessagesStream } from '../../protocols/messages/stream';
import { NativeMessagesObserver, usageOfJson } from '../../protocols/messages/native';
import { streamErrorEvent } from '../../protocols/messages/errors';
import type { Format, JsonAnswer } from '../formats/format';
import { estimateTokens, estimateUsage, promptChars } from '../../request/usage';
import { withOutputCap } from '../../request/output-cap';
import { coreUsage, isRecord, parseBackendJson, type Exchange } from '../exchange';
import type { Upstream } from '../upstream';
import { NativeRelay, type NativeDialect } from './native-relay';
import { ThroughChat } from './through-chat';
import { translatable } from './plain-chat';
import { MessagesOutput } from '../../output-rules/messages-events';
import { checkChatAnswer } from '../../output-rules/answers';
import { checkMessageJson } from '../../output-rules/native-answers';

/** A message id in Anthropic's form: msg_ and 24 base62-like characters. */
export const newMessageId = (): string => `msg_${randomBytes(18).toString('base64url').replace(/[-_]/g, '0').slice(0, 24)}`;

export class MessagesExchange implements Exchange, RequestSource {
  readonly protocol = 'messages';

  /**
   * `request`: the client's body as parsed (every field it sent is kept, so a
   * backend serving the API gets it as sent); `options`: how the chat
   * translation treats server tools and an assistant prefix.
   */
  constructor(public request: MessagesRequest, private readonly options: ToChatOptions = {}, readonly id: string = newMessageId()) {}

  /** The request view: the conversation as chat, every text it forwards (system and tool results included), and what chat cannot carry. */
  view(): { chat: ChatRequest; texts: string[]; dropped: string[] } {
    const request = this.request;
    const { messages, params, dropped } = toChat(request, this.options);
    const texts: string[] = [];
    messagesTexts(request, texts);
    const stream = request.stream === true;
    return { chat: { model: request.model, messages, stream, model_params: params, texts }, texts, dropped };
  }

  rewriteTexts(fn: (text: string) => string): boolean {
    const request = rewriteStrings(this.request, fn, false, true);
    if (request === this.request) return false;
    this.request = request;
    return true;
  }

  capOutput(tokens: number): void {
    this.request = withOutputCap(this.request, tokens, 'max_tokens');
  }

  serves(upstream: Upstream, ctx: Context): boolean {
    return upstream.apis.includes('messages') || translatable(upstream, ctx);
  }

  formatFor(upstream: Upstream): Format {
    return upstream.apis.includes('messages') ? new NativeMessages(this) : new MessagesThroughChat(this, upstream.format);
  }

  meta(ctx: Context): AnswerMeta {
    return { id: this.id, model: ctx.model ?? String(this.request.model), inputTokens: estimateTokens(promptChars(ctx)) };
  }
}

class MessagesThroughChat implements Format {
  constructor(private readonly exchange: MessagesExchange, private readonly chat: Format) {}

  requestBody(ctx: Context, upstreamModel: string): string {
    return this.chat.requestBody(ctx, upstreamModel);
  }

  respondJson(ctx: Context, text: string, upstream: string): JsonAnswer {
    const chat = parseBackendJson(text, upstream);
    checkChatAnswer(ctx, chat);
    const { body, usage } = fromChatJson(chat, this.exchange.meta(ctx));
    return { body: JSON.stringify(body), usage: usage !== undefined ? coreUsage(usage) : estimateUsage(ctx, contentChars(body.content)) };
  }

  streamTransformer(ctx: Context, upstream: string) {
    return new ThroughChat(ctx, upstream, new MessagesStream(this.exchange.meta(ctx)));
  }
}

class NativeMessages implements Format {
  readonly path = '/messages';
  // Never pinned: the SDKs send different versions, and betas the backend may serve.
  readonly passHeaders = ['anthropic-version', 'anthropic-beta'];

  constructor(private readonly exchange: MessagesExchange) {}

  requestBody(_ctx: Context, upstreamModel: string): string {
    return JSON.stringify({ ...this.exchange.request, model: upstreamModel });
  }

  respondJson(ctx: Context, text: string, upstream: string): JsonAnswer {
    const body = parseBackendJson(text, upstream);
    if (isRecord(body) && ctx.model !== undefined) body.model = ctx.model;
    checkMessageJson(ctx, body);
    const usage = usageOfJson(body);
    return { body: JSON.stringify(body), usage: usage !== undefined ? coreUsage(usage) : estimateUsage(ctx, 0) };
  }

  streamTransformer(ctx: Context, upstream: string) {
    return new NativeRelay(ctx, upstream, MESSAGES_DIALECT, { model: ctx.model ?? String(this.exchange.request.model) });
  }
}

/** Characters of text, thinking and tool input in a message's blocks (the usage estimate when none is reported). */
function contentChars(content: readonly unknown[]): number {
  let chars = 0;
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (typeof block.text === 'string') chars += block.text.length;
    if (typeof block.thinking === 'string') chars += block.thinking.length;
    if (block.input !== undefined) chars += JSON.stringify(block.input).length;
  }
  return chars;
}

const DELTA_TEXT = ['text', 'partial_json', 'thinking'] as const;

export const MESSAGES_DIALECT: NativeDialect = {
  observer: () => new NativeMessagesObserver(),
  output: (text) => new MessagesOutput(text),
  rename(event, { model }) {
    const message = event.message;
    if (event.type !== 'message_start' || !isRecord(message) || message.model === model) return false;
    message.model = model;
    return true;
  },
  chars(event) {
    if (event.type !== 'content_block_delta' || !isRecord(event.delta)) return 0;
    let chars = 0;
    for (const key of DELTA_TEXT) if (typeof event.delta[key] === 'string') chars += (event.delta[key] as string).length;
    return chars;
  },
  ends: (event) => event.type === 'error',
  failure: (failure, _last, requestId) => [streamErrorEvent(failure, requestId)],
};
