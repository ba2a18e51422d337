// A Responses API request (POST /v1/responses) on its way to an upstream:
// relayed as sent to a backend that serves the API (apis: [responses]), with
// the model renamed and an earlier turn's items in place of
// previous_response_id; otherwise translated to chat completions (the
// request view is already the translation: ctx.chat) and answered as a
// response object or the Responses events. A complete answer is kept for a
// later turn when the request asks to store it.
import type { Context, RequestSource } from '../../pipeline/context';
import type { ChatRequest } from '../../contract/types';
import {
  fromChatJson, inputItems, itemTexts, ResponsesObserver, ResponsesStream, responsesTexts, toChat, usageOfJson,
  type HostedTools, type ResponseMeta, type ResponseObject, type ResponsesRequest, type StoredItem,
} from '../../protocols/responses';
import { rewriteStrings } from '../../request/rewrite-strings';
import { isObject } from '../../protocols/json';
import type { Format, JsonAnswer } from '../formats/format';
import { estimateUsage } from '../../request/usage';
import { withOutputCap } from '../../request/output-cap';
import { coreUsage, isRecord, parseBackendJson, type Exchange } from '../exchange';
import type { Upstream } from '../upstream';
import { NativeRelay, type Names, type NativeDialect, type NativeObserver } from './native-relay';
import { ThroughChat } from './through-chat';
import { ResponsesOutput } from '../../output-rules/responses-events';
import { checkChatAnswer } from '../../output-rules/answers';
import { checkResponseJson } from '../../output-rules/native-answers';
import { translatable } from './plain-chat';

/** One turn of a conversation: the request, the id its answer gets, and the items of the turns it continues. */
export interface ResponsesTurn {
  readonly request: ResponsesRequest;
  readonly id: string;
  /** Unix seconds. */
  readonly createdAt: number;
  /** The stored items of the turn it continues (previous_response_id), when the gateway keeps them. */
  readonly history?: readonly StoredItem[];
}

/** Where turns go when the request asks to store them (the gateway's response store). */
export interface ResponseKeeper {
  /** Whether the gateway keeps turns: then a native backend is asked not to, and previous_response_id is resolved here. */
  readonly keeps: boolean;
  /** The turn is sent to a backend: kept as in progress (and cancellable) until it ends; undefined when it is not kept. */
  begin(ctx: Context, exchange: ResponsesExchange): KeptTurn | undefined;
  /** The items a later turn continues from (previous_response_id): the caller's own, else a 404. */
  continueFrom(ctx: Context, responseId: string): Promise<StoredItem[]>;
  /** A native backend's own response id reached the caller (the gateway keeps no turns): remembered as its owner's. */
  issued?(ctx: Context, responseId: string): void;
}

/** A turn being kept: its end, once the answer is complete. */
export interface KeptTurn {
  completed(response: ResponseObject): void;
}

export class ResponsesExchange implements Exchange, RequestSource {
  readonly protocol = 'responses';
  private kept?: KeptTurn;
  private begun = false;

  /** `hostedTools`: what the chat translation does with a tool only the API's provider runs (a native backend gets them all). */
  constructor(public turn: ResponsesTurn, readonly keeper?: ResponseKeeper, private readonly hostedTools: HostedTools = 'drop') {}

  /** The request view: the conversation (with the turns it continues) as chat, every text it forwards, and what chat cannot carry. */
  view(): { chat: ChatRequest; texts: string[]; dropped: string[] } {
    const { request, history } = this.turn;
    const { messages, params, dropped } = toChat(request, { hostedTools: this.hostedTools, history });
    const texts: string[] = [];
    responsesTexts(request, texts);
    if (history !== undefined) itemTexts(history, texts);
    const stream = request.stream === true;
    return { chat: { model: request.model, messages, stream, model_params: params, texts }, texts, dropped };
  }

  /** The request and the stored turns it continues, rewritten: the backend gets them so, whether it serves the API or chat. */
  rewriteTexts(fn: (text: string) => string): boolean {
    const request = rewriteStrings(this.turn.request, fn, false, true);
    const history = rewriteStrings(this.turn.history, fn, false, true);
    if (request === this.turn.request && history === this.turn.history) return false;
    this.turn = { ...this.turn, request, history };
    return true;
  }

  capOutput(tokens: number): void {
    this.turn = { ...this.turn, request: withOutputCap(this.turn.request, tokens, 'max_output_tokens') };
  }

  serves(upstream: Upstream, ctx: Context): boolean {
    return upstream.apis.includes('responses') || translatable(upstream, ctx);
  }

  formatFor(upstream: Upstream, ctx: Context): Format {
    if (!this.begun) {
      this.begun = true;
      if (this.turn.request.store !== false) this.kept = this.keeper?.begin(ctx, this);
    }
    return upstream.apis.includes('responses') ? new NativeResponses(this) : new ResponsesThroughChat(this, upstream.format);
  }

  /**
   * The client's names for a native answer: its model id and, when the gateway keeps the turn, the gateway's
   * response id and the fields the relay changed (the backend was sent store: false and no previous_response_id).
   */
  names(ctx: Context): Names {
    const model = ctx.model ?? this.turn.request.model;
    const keeper = this.keeper;
    if (keeper?.keeps !== true) {
      // The backend keeps the turn (unless asked not to): its id is remembered as the caller's owner's, once.
      if (keeper?.issued === undefined || this.turn.request.store === false) return { model };
      let told: string | undefined;
      return { model, issued: (id) => { if (id !== told) keeper.issued!(ctx, (told = id)); } };
    }
    const { previous_response_id, store } = this.turn.request;
    return { model, id: this.turn.id, echo: { previous_response_id: previous_response_id ?? null, store: store ?? true } };
  }

  meta(ctx: Context): ResponseMeta {
    return { id: this.turn.id, createdAt: this.turn.createdAt, model: ctx.model ?? this.turn.request.model, request: this.turn.request, history: this.turn.history };
  }

  /** A complete answer: kept when the request stores it (OpenAI's default). */
  completed(_ctx: Context, response: unknown): void {
    if (this.kept !== undefined && isObject(response)) this.kept.completed(response as ResponseObject);
  }
}

class ResponsesThroughChat implements Format {
  constructor(private readonly exchange: ResponsesExchange, private readonly chat: Format) {}

  requestBody(ctx: Context, upstreamModel: string): string {
    return this.chat.requestBody(ctx, upstreamModel);
  }

  respondJson(ctx: Context, text: string, upstream: string): JsonAnswer {
    const chat = parseBackendJson(text, upstream);
    checkChatAnswer(ctx, chat);
    const { body, usage } = fromChatJson(chat, this.exchange.meta(ctx));
    this.exchange.completed(ctx, body);
    return { body: JSON.stringify(body), usage: usage !== undefined ? coreUsage(usage) : estimateUsage(ctx, outputChars(body.output)) };
  }

  streamTransformer(ctx: Context, upstream: string) {
    const stream = new ResponsesStream(this.exchange.meta(ctx));
    return new ThroughChat(ctx, upstream, stream, () => this.exchange.completed(ctx, stream.response));
  }
}

class NativeResponses implements Format {
  readonly path = '/responses';

  constructor(private readonly exchange: ResponsesExchange) {}

  requestBody(_ctx: Context, upstreamModel: string): string {
    const { request, history } = this.exchange.turn;
    const body: Record<string, unknown> = { ...request, model: upstreamModel };
    if (this.exchange.keeper?.keeps === true) {
      // The gateway keeps the conversation: the backend gets it whole, and keeps nothing of it.
      if (history !== undefined) body.input = [...history.map(asInput), ...inputItems(request)];
      delete body.previous_response_id;
      body.store = false;
    }
    return JSON.stringify(body);
  }

  respondJson(ctx: Context, text: string, upstream: string): JsonAnswer {
    const body = parseBackendJson(text, upstream);
    if (isRecord(body)) RESPONSES_DIALECT.rename({ response: body }, this.exchange.names(ctx));
    checkResponseJson(ctx, body);
    this.exchange.completed(ctx, body);
    const usage = usageOfJson(body);
    return { body: JSON.stringify(body), usage: usage !== undefined ? coreUsage(usage) : estimateUsage(ctx, isRecord(body) ? outputChars(body.output) : 0) };
  }

  streamTransformer(ctx: Context, upstream: string) {
    return new NativeRelay(ctx, upstream, RESPONSES_DIALECT, this.exchange.names(ctx), (seen) => this.exchange.completed(ctx, (seen as ResponsesObserver).response));
  }
}

/** A stored item as input again: the id a backend gave it stays, its status goes (input items carry none). */
function asInput(item: StoredItem): StoredItem {
  const { status: _status, ...rest } = item as StoredItem & { status?: unknown };
  return rest as StoredItem;
}

/** Characters of text and arguments in output items (the usage estimate when none is reported). */
function outputChars(output: unknown): number {
  let chars = 0;
  if (!Array.isArray(output)) return 0;
  for (const item of output) {
    if (!isRecord(item)) continue;
    if (typeof item.arguments === 'string') chars += item.arguments.length;
    if (Array.isArray(item.content)) for (const part of item.content) if (isRecord(part) && typeof part.text === 'string') chars += part.text.length;
  }
  return chars;
}

const DELTAS = new Set(['response.output_text.delta', 'response.function_call_arguments.delta', 'response.reasoning_summary_text.delta', 'response.reasoning_text.delta']);

export const RESPONSES_DIALECT: NativeDialect = {
  observer: (): NativeObserver => new ResponsesObserver(),
  output: (text) => new ResponsesOutput(text),
  rename(event, { model, id, echo, issued }) {
    const response = event.response;
    if (!isRecord(response)) return false;
    let changed = false;
    const set = (field: string, value: unknown) => {
      if (response[field] !== value) { response[field] = value; changed = true; }
    };
    set('model', model);
    if (id !== undefined) set('id', id);
    else if (issued !== undefined && typeof response.id === 'string') issued(response.id);
    if (echo !== undefined) for (const field in echo) set(field, echo[field]);
    return changed;
  },
  chars: (event) => (DELTAS.has(event.type as string) && typeof event.delta === 'string' ? event.delta.length : 0),
  ends: (event) => event.type === 'error',
  failure(failure, last, _requestId, seen) {
    const seq = typeof last?.sequence_number === 'number' ? last.sequence_number + 1 : 0;
    // The response as the backend last gave it (renamed on its way out), failed.
    const response = (seen as ResponsesObserver).latest ?? {};
    const error = { code: failure.code, message: failure.message };
    return [
      { type: 'error', code: failure.code, message: failure.message, param: null, sequence_number: seq } as never,
      { type: 'response.failed', sequence_number: seq + 1, response: { ...response, status: 'failed', error } } as never,
    ];
  },
};
