// One sampled request's spans, held on its context (ctx.trace, set only when
// the request is sampled): the server span from arrival to the response's
// close, and under it a span per stage that can take time: the wait for
// in-flight slots, each backend attempt, a fallback or a continuation (whose
// own admission and attempts go under it). Parents are passed explicitly:
// `parent` is the server span's context, or the fallback's while one is
// under way; nothing is looked up in an async context. An object with
// methods, made once per sampled request, never a closure on the context.
import type { IncomingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { Outcome, RequestContext } from '../contract/plugin';
import { isGatewayError } from '../contract/errors';
import { AnswerFacts } from './answer';
import { AttemptSpan, injectParent, operationName, type AttemptFacts } from './attempt-span';
import { inputMessages, outputMessages } from './content';

/** What every request trace of one config shares. */
export interface TraceKit {
  readonly tracer: Tracer;
  readonly captureContent: boolean;
  /** Each route's model (exact or glob), by the route's index: sluice.route. */
  readonly routeNames: readonly string[];
}

/** The core's facts at the end of a request, beyond the plugins' view. */
export interface ForwardingFacts {
  readonly attempts: number;
  readonly endpoint?: string;
}

/** What the request costs, when a pricing step has set it (read guardedly: not every config prices requests). */
const costOf = (ctx: RequestContext): number | undefined => {
  const cost = (ctx as { cost?: unknown }).cost;
  return typeof cost === 'number' && Number.isFinite(cost) ? cost : undefined;
};

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export class RequestTrace {
  readonly traceId: string;
  private readonly serverContext: Context;
  private parent: Context;
  /** The fallback or continuation under way. */
  private stage?: Span;
  private admissionSpan?: Span;
  private lastAttempt?: AttemptSpan;
  private answer?: AnswerFacts;
  /** Set once the request was forwarded: only then is its text captured. */
  private forwarded = false;

  constructor(private readonly kit: TraceKit, private readonly server: Span, private readonly protocol: RequestContext['protocol']) {
    this.traceId = server.spanContext().traceId;
    this.parent = this.serverContext = trace.setSpan(ROOT_CONTEXT, server);
  }

  /** The request goes to its backends now, past every request hook: the text as forwarded, when captured. */
  sent(ctx: RequestContext): void {
    this.forwarded = true;
    if (!this.kit.captureContent) return;
    const input = inputMessages(ctx.chat, ctx.image);
    if (input !== undefined) this.server.setAttribute('gen_ai.input.messages', input);
  }

  /**
   * A pass-through request's headers, before the proxy copies them: its
   * backend joins the trace under the server span (there is no attempt span
   * to be its parent). The caller's traceparent is replaced, and its
   * tracestate too: the server span carries the caller's on, and one that
   * came without a valid traceparent belongs to no trace.
   */
  propagate(headers: IncomingHttpHeaders): void {
    delete headers.tracestate;
    injectParent(this.server, headers);
  }

  /** The wait for in-flight slots begins (the route's, or a fallback's). */
  admissionStart(limits: number): void {
    this.admissionSpan = this.kit.tracer.startSpan('sluice.admission', { kind: SpanKind.INTERNAL, attributes: { 'sluice.admission.limits': limits } }, this.parent);
  }

  /** admitted, left (the client went away), or the refusal's reason. */
  admissionEnd(outcome: string): void {
    const span = this.admissionSpan;
    if (span === undefined) return;
    this.admissionSpan = undefined;
    span.setAttribute('sluice.admission.outcome', outcome);
    if (outcome !== 'admitted' && outcome !== 'left') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    span.end();
  }

  /** The request moves to a fallback model (before anything reached the client) or continues a cut stream on one. */
  fallback(kind: 'fallback' | 'continuation', model: string, from: string | undefined, cause: unknown, prefixTokens?: number): void {
    this.stage?.end();
    const attributes: Record<string, string | number> = { 'sluice.fallback.model': model };
    if (from !== undefined) attributes['sluice.fallback.from'] = from;
    if (isGatewayError(cause)) attributes['sluice.fallback.cause'] = cause.reason;
    if (prefixTokens !== undefined) attributes['sluice.continuation.prefix_tokens'] = prefixTokens;
    this.stage = this.kit.tracer.startSpan(`sluice.${kind} ${model}`, { kind: SpanKind.INTERNAL, attributes }, this.serverContext);
    this.parent = trace.setSpan(ROOT_CONTEXT, this.stage);
  }

  attempt(facts: AttemptFacts): AttemptSpan {
    return (this.lastAttempt = new AttemptSpan(this.kit.tracer, this.parent, facts));
  }

  /** A failed attempt goes again: where (another endpoint, the same, a fresh connection) and after how long. */
  retry(reason: string, where: string, delayMs: number): void {
    (this.stage ?? this.server).addEvent('sluice.retry', { 'sluice.retry.reason': reason, 'sluice.retry.where': where, 'sluice.retry.delay_ms': delayMs });
  }

  /** The first event reached the client: an event on the attempt that brought it. */
  firstToken(): void {
    this.lastAttempt?.firstToken();
  }

  /** A JSON answer as the client got it. */
  answered(body: string): void {
    (this.answer ??= new AnswerFacts(this.protocol, this.kit.captureContent)).json(body);
  }

  /** One streamed event as the client got it. */
  event(data: string, name: string | undefined): void {
    (this.answer ??= new AnswerFacts(this.protocol, this.kit.captureContent)).event(data, name);
  }

  /** The response has closed: what was asked, what answered, what it cost, how it ended. */
  finish(ctx: RequestContext, outcome: Outcome, f: ForwardingFacts): void {
    const s = this.server;
    s.setAttribute('http.response.status_code', outcome.status);
    const p = ctx.principal;
    if (p !== undefined) {
      s.setAttribute('sluice.key_id', p.id);
      if (p.org !== null) s.setAttribute('sluice.org', p.org);
    }
    if (ctx.route !== undefined) {
      s.setAttribute('sluice.route', this.kit.routeNames[ctx.route.index] ?? '');
      s.setAttribute('sluice.upstream', ctx.route.upstream);
    }
    if (f.endpoint !== undefined) s.setAttribute('sluice.endpoint', f.endpoint);
    if (f.attempts > 0) s.setAttribute('sluice.attempts', f.attempts);
    this.request(ctx);
    this.response(ctx);
    const cost = costOf(ctx);
    if (cost !== undefined) s.setAttribute('sluice.cost', cost);
    if (outcome.reason !== null) {
      s.setAttribute('sluice.reason', outcome.reason);
      s.setAttribute('error.type', outcome.reason);
      // A client's own error (4xx) leaves a server span's status unset, as the HTTP conventions ask.
      if (outcome.status >= 500) s.setStatus({ code: SpanStatusCode.ERROR, message: outcome.reason });
    }
    this.admissionEnd('left');
    this.stage?.end();
    s.end();
  }

  /** What the client asked: the model and sampling parameters, in the GenAI conventions. */
  private request(ctx: RequestContext): void {
    const s = this.server;
    const named = ctx.inputs ?? ctx.audio;
    if (named !== undefined) {
      s.setAttribute('gen_ai.operation.name', operationName(ctx.endpoint));
      s.setAttribute('gen_ai.request.model', named.model);
      return;
    }
    const asked = ctx.chat ?? ctx.image;
    if (asked === undefined) return;
    s.setAttribute('gen_ai.operation.name', operationName(ctx.chat !== undefined ? 'chat' : 'images'));
    s.setAttribute('gen_ai.request.model', asked.model);
    const params = asked.model_params;
    const maxTokens = num(params.max_completion_tokens) ?? num(params.max_tokens) ?? num(params.max_output_tokens);
    if (maxTokens !== undefined) s.setAttribute('gen_ai.request.max_tokens', maxTokens);
    const temperature = num(params.temperature);
    if (temperature !== undefined) s.setAttribute('gen_ai.request.temperature', temperature);
    const topP = num(params.top_p);
    if (topP !== undefined) s.setAttribute('gen_ai.request.top_p', topP);
    if (ctx.chat !== undefined) s.setAttribute('gen_ai.request.stream', ctx.stream);
  }

  /** What answered: its id, model and finish reasons as the client got them, the usage charged, the first token's time. */
  private response(ctx: RequestContext): void {
    const s = this.server;
    const a = this.answer;
    if (a !== undefined) {
      if (a.id !== undefined) s.setAttribute('gen_ai.response.id', a.id);
      if (a.model !== undefined) s.setAttribute('gen_ai.response.model', a.model);
      if (a.finishReasons.length > 0) s.setAttribute('gen_ai.response.finish_reasons', a.finishReasons);
      if (this.forwarded && a.text !== undefined) s.setAttribute('gen_ai.output.messages', outputMessages(a.text, a.finishReasons));
    }
    const u = ctx.usage;
    if (u !== undefined) {
      s.setAttribute('gen_ai.usage.input_tokens', u.prompt_tokens);
      s.setAttribute('gen_ai.usage.output_tokens', u.completion_tokens);
      if (u.cached_tokens !== undefined) s.setAttribute('gen_ai.usage.cache_read.input_tokens', u.cached_tokens);
      if (u.reasoning_tokens !== undefined) s.setAttribute('gen_ai.usage.reasoning.output_tokens', u.reasoning_tokens);
      s.setAttribute('sluice.usage.estimated', u.estimated);
    }
    const first = ctx.timings.firstEvent;
    if (first !== undefined) s.setAttribute('gen_ai.response.time_to_first_chunk', first / 1000);
  }
}
