// The per-request context every plugin sees, and the one place a request is
// finished: when the response closes, for any reason, the finish hooks run once.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Endpoint, Version } from '../config/schema';
import { GatewayError } from '../contract/errors';
import type { Outcome, RequestContext, Timings, Usage } from '../contract/plugin';
import type { AudioRequest, ChatRequest, ClientProtocol, ImageRequest, InputsRequest, Principal, Route } from '../contract/types';
import { outputCapOf, withOutputCap } from '../request/output-cap';
import type { RequestTrace } from '../tracing/request-trace';
import type { OutputPolicy } from './output-policy';

/** The context the gateway attached to a request, if it is an API request. */
export const contextOf = (req: IncomingMessage): Context | undefined => (req as { sluice?: Context }).sluice;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the client's x-request-id if valid, else a new UUID; set on the response once. */
export function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const set = res.getHeader('x-request-id');
  if (typeof set === 'string') return set;
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('x-request-id', id);
  return id;
}

/** The backend call of a request, as the core ends it early. */
export interface CallInFlight {
  /** Gives up on the backend request (the client left, or the answer is decided). */
  abandon(): void;
  /** Ends the request with an error now: an error event mid-stream, else an error response (the drain deadline). */
  interrupt(err: GatewayError): void;
}

/** A request's fallback models, as the reply asks for them when the backends fail (api/forward.ts). */
export interface Fallbacks {
  /** Nothing reached the client yet: sends the request to the next fallback; false when none may take it. */
  tryNext(err: unknown): boolean;
  /** A stream cut after content was sent: continues it on a fallback, at most once; false when none may. */
  continueStream(err: unknown): boolean;
}

const nothing = (): void => undefined;

/**
 * The client's own request, where a protocol's exchange keeps it (Responses,
 * Messages): what a backend serving that protocol receives as sent, and what
 * the request view (ctx.chat, ctx.texts) is made from.
 */
export interface RequestSource {
  /** Rewrites every text of the client's request through `fn`; true when one changed. */
  rewriteTexts(fn: (text: string) => string): boolean;
  /** Sets the client's request's output cap to `tokens` (the caller has checked it lowers it). */
  capOutput(tokens: number): void;
  /** The request view as the request now is: the chat translation and every text it forwards. */
  view(): { chat: ChatRequest; texts: string[] };
}

/**
 * How far the forwarding of one request got, and the handles to end it: the
 * core's, not the plugins'. Handles made per request are objects with
 * methods, not closures: a per-request closure stored here kept each request's
 * whole graph alive through a minor GC (measured: 8.5 KB promoted per
 * request, a third of the gateway's CPU spent in the collector).
 */
export class Forwarding {
  /** The backend call in flight (or the last one): each attempt, forwarded or passed through, registers itself with `track`. */
  call?: CallInFlight;
  /** Set by the proxy once an event stream has started. */
  streaming = false;
  /** Characters of generated text relayed so far; the usage estimate of a stream cut short. */
  streamedChars = 0;
  /** Stream events skipped because they were not JSON objects (the access log counts them). */
  skippedEvents = 0;
  /** Attempts at backends so far, and the endpoint of the last one (for the access log). */
  attempts = 0;
  endpoint?: string;
  /** True once the response's fate is decided (sent, or failed once): set by `settle`, or by the context's `failWith`. */
  settled = false;
  /** The stream's head announced the cost trailer (a priced request whose client asked for trailers). */
  costTrailer = false;
  /** Hands an error to the error middleware (set by the router before forwarding). */
  fail: (err: unknown) => void = nothing;
  /** Set by the router when the route has fallback models. */
  fallbacks?: Fallbacks;
  /** Set by the fallbacks when the route may continue a cut stream: the transformer keeps the text it relays (stream.relayedText). */
  keepsText = false;
  /** The client's stream id and created, as the transformer first sent them. */
  streamId?: string;
  streamCreated = 0;
  /** Set once the upstream's total deadline (timeouts.totalMs) is armed for this request. */
  deadline = false;
  /** A continuation under way: the prefix's tokens, the failure it stands in for, and how much was relayed when it began. */
  continuation?: { prefixTokens: number; cause: unknown; charsAtStart: number };
  /** What output rules did to the answer: masked text, or cut it (for the access log). */
  filtered?: 'mask' | 'block';
  /** The output rules the request's plugins gave its answer; undefined when none did (nothing is checked). */
  output?: OutputPolicy;
  /** The stream being relayed, set by the call: how a failure after the head ends it in the client's protocol. */
  stream?: { failure?(err: GatewayError): string; readonly lastSequence?: number; partial?(): { response?: object; output?: readonly object[] }; readonly relayedText?: string };

  /** A backend call starts: the one the request ends early if it must. */
  track(call: CallInFlight): void {
    this.call = call;
  }

  /** Decides the response's fate: false when it already was. */
  settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    return true;
  }
}

export class Context implements RequestContext {
  readonly id: string;
  readonly startedAt = performance.now();
  readonly timings: Timings = {};
  /** Each plugin's per-request state, by its slot in the pipeline (made on first use). */
  pluginState?: unknown[];
  principal?: Principal;
  user?: string;
  model?: string;
  route?: Route;
  chat?: ChatRequest;
  image?: ImageRequest;
  inputs?: InputsRequest;
  audio?: AudioRequest;
  stream = false;
  texts: readonly string[] = [];
  /** Set for a protocol whose client request an exchange keeps (Responses, Messages): rewriteTexts walks it. */
  source?: RequestSource;
  usage?: Usage;
  cost?: number;
  error?: GatewayError;
  /** The core's own forwarding state: never part of the plugins' view (RequestContext). */
  readonly forwarding = new Forwarding();
  /** True once the response has closed (sent, failed, or the client left). */
  closed = false;
  /** The in-flight slots the request holds (src/admission), given back once when it finishes. */
  slots?: object;
  /** The request hooks still running, if one of them was asynchronous: onFinish waits for them. */
  requestHooks?: Promise<void>;
  /** The request's spans: set only when tracing is on and the request is sampled (src/tracing). */
  trace?: RequestTrace;
  /** Made only when a plugin asks for the signal: most requests never wait on anything. */
  private abort?: AbortController;

  constructor(
    readonly version: Version,
    readonly endpoint: Endpoint | 'models' | 'passthrough',
    req: IncomingMessage,
    readonly res: ServerResponse,
    readonly protocol: ClientProtocol = 'chat',
  ) {
    this.id = requestIdOf(req, res);
    (req as { sluice?: Context }).sluice = this;
  }

  /** The request failed with `error`, and its response's fate is decided (the error middleware, a failure mid-stream). */
  failWith(error: GatewayError): void {
    this.error = error;
    this.forwarding.settled = true;
  }

  setHeader(name: string, value: string): void {
    if (!this.res.headersSent) this.res.setHeader(name, value);
  }

  capOutput(tokens: number): void {
    const chat = this.chat;
    if (chat === undefined || !(tokens >= 1)) return;
    const asked = outputCapOf(chat.model_params);
    if (asked !== undefined && asked <= tokens) return;
    if (this.source !== undefined) {
      this.source.capOutput(tokens);
      this.chat = this.source.view().chat;
      return;
    }
    // Every cap field the request carries, so a backend reads this cap whichever it reads; max_tokens when it names none.
    this.chat = { ...chat, model_params: withOutputCap(chat.model_params, tokens, asked === undefined ? 'max_tokens' : undefined) };
  }

  get signal(): AbortSignal {
    this.abort ??= new AbortController();
    if (this.closed && !this.abort.signal.aborted) this.abort.abort();
    return this.abort.signal;
  }

  elapsed(): number {
    return performance.now() - this.startedAt;
  }

  /** Called once when the response closes; returns undefined on later calls. */
  finish(): Outcome | undefined {
    if (this.closed) return undefined;
    this.closed = true;
    this.abort?.abort();
    const aborted = !this.res.writableFinished;
    const f = this.forwarding;
    if (aborted) {
      f.call?.abandon();
      if (this.error === undefined || f.streaming) this.error = new GatewayError('client_closed', 'The client closed the connection.');
    }
    const status = this.error === undefined ? this.res.statusCode : this.error.status;
    return { status, reason: this.error?.reason ?? null, aborted, durationMs: this.elapsed() };
  }
}
