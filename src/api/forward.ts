// Sending a routed request to its upstream, and to the route's fallback
// models when its backends cannot answer: before anything reached the
// client, the next fallback that may take it; after a stream was cut, one
// that continues it from the text already sent (routes[].continueOnFailure).
import type { Endpoint } from '../config/schema';
import type { Context, Fallbacks } from '../pipeline/context';
import { openaiFormat } from '../proxy/formats/openai';
import { estimateTokens } from '../request/usage';
import type { Route } from '../routing/routes';
import type { ApiRuntime } from './api-runtime';
import type { Exchange } from '../proxy/exchange';
import { decideFallback, type FallbackOption } from './fallback-decision';

const UPSTREAM_PATH: Record<Endpoint, string> = {
  chat: '/chat/completions', images: '/images/generations', embeddings: '/embeddings', rerank: '/rerank', score: '/score', moderations: '/moderations',
  transcriptions: '/audio/transcriptions', translations: '/audio/translations', speech: '/audio/speech',
};

/** Sends the request on its route; a request of another client protocol in the format its exchange chooses for that upstream. */
export function forwardTo(runtime: ApiRuntime, ctx: Context, endpoint: Endpoint, route: Route, model: string, exchange?: Exchange): void {
  const upstream = runtime.upstreams.get(route.upstream)!;
  const format = exchange === undefined ? upstream.format : exchange.formatFor(upstream, ctx);
  const sent = route.upstreamModel ?? model;
  upstream.forward(ctx, format.path ?? UPSTREAM_PATH[endpoint], format.requestBytes?.(ctx, sent) ?? format.requestBody(ctx, sent), format);
}

/**
 * One request's fallback models, tried in order, each with its own route
 * (upstream, format, dialect), if the key may use it and its dialect takes
 * the request's messages. One list for both uses: a fallback tried before the
 * stream began is not asked again to continue it. An object on the context,
 * not closures (see Forwarding).
 */
export class FallbackChain implements Fallbacks {
  private readonly left: string[];
  private readonly dialect: Route['dialect'];
  private readonly failoverOn: readonly string[];
  /** Whether a cut stream may still be continued: once, and only the text of one choice. */
  private continues: boolean;

  constructor(private readonly runtime: ApiRuntime, private readonly ctx: Context, private readonly endpoint: Endpoint, route: Route, private readonly exchange?: Exchange) {
    this.left = [...route.fallbacks];
    this.dialect = route.dialect;
    this.failoverOn = route.failoverOn;
    // Continuing a cut stream is a chat completion's: another protocol's stream ends with its own failure events.
    this.continues = route.continueOnFailure && ctx.stream && ctx.protocol === 'chat' && ctx.chat !== undefined && (ctx.chat.model_params.n ?? 1) === 1;
    if (this.continues) ctx.forwarding.keepsText = true;
  }

  /** Nothing reached the client yet: the next fallback answers instead. The answer names it, and its usage is charged to it. */
  tryNext(err: unknown): boolean {
    const { ctx, runtime } = this;
    const left = this.options();
    const i = decideFallback({ when: 'before', err, failoverOn: this.failoverOn, clientGone: ctx.closed, mayContinue: false, relayed: undefined, left });
    if (i < 0) return false;
    const next = this.take(left, i);
    const id = left[i].id;
    ctx.trace?.fallback('fallback', id, ctx.model, err);
    this.switchTo(id, next, () => forwardTo(runtime, ctx, this.endpoint, next, id, this.exchange));
    return true;
  }

  /**
   * The request moves to a fallback's route: it takes that route's model and
   * upstream slots (waiting in their queue like any request) and gives back
   * the first route's, then `send`s. Refused there (429, 503), the request
   * ends with that refusal; a client gone meanwhile is sent nowhere.
   */
  private switchTo(id: string, next: Route, send: () => void): void {
    const { ctx, runtime } = this;
    const from = ctx.route;
    ctx.model = id;
    ctx.route = next;
    const pending = runtime.admission.switchRoute(ctx, from, next);
    if (pending === undefined) return send();
    pending.then((admitted) => { if (admitted && !ctx.closed) send(); }, (err: unknown) => {
      ctx.forwarding.fallbacks = undefined;
      runtime.reply.fail(ctx, err);
    });
  }

  /**
   * A stream cut after content was sent: the first remaining fallback whose
   * route takes an assistant prefix gets the conversation with the text
   * relayed so far as a final assistant message, and its events go on under
   * the same completion id.
   */
  continueStream(err: unknown): boolean {
    const { ctx } = this;
    const f = ctx.forwarding;
    const prefix = f.keepsText ? f.stream?.relayedText : undefined;
    const mayContinue = this.continues;
    this.continues = false;
    const left = mayContinue ? this.options() : [];
    const i = decideFallback({ when: 'cut', err, failoverOn: this.failoverOn, clientGone: ctx.closed, mayContinue, relayed: prefix, left });
    if (i < 0) return false;
    const next = this.take(left, i);
    const id = left[i].id;
    f.keepsText = false;
    f.continuation = { prefixTokens: estimateTokens(prefix!.length), cause: err, charsAtStart: f.streamedChars };
    ctx.trace?.fallback('continuation', id, ctx.model, err, f.continuation.prefixTokens);
    const upstream = this.runtime.upstreams.get(next.upstream)!;
    this.switchTo(id, next, () => {
      const body = JSON.parse(upstream.format.requestBody(ctx, next.upstreamModel ?? id)) as { messages: unknown[] };
      body.messages.push({ role: 'assistant', content: prefix });
      upstream.forward(ctx, UPSTREAM_PATH.chat, JSON.stringify({ ...body, ...next.assistantPrefix!.params }));
    });
    return true;
  }

  /** The fallbacks not yet passed over, with what decides each (only on a failure). */
  private options(): FallbackOption[] {
    const { runtime, ctx } = this;
    return this.left.map((id) => {
      const route = runtime.routes.resolve(id, this.endpoint, ctx.version);
      return {
        id, routed: route !== undefined, allowed: ctx.principal!.mayUse(id),
        // Takes the request as it is: the messages of its dialect, and (another protocol) a backend that can serve it.
        dialectFits: (this.dialect !== 'openai' || route?.dialect === 'openai') && (this.exchange === undefined || (route !== undefined && this.exchange.serves(runtime.upstreams.get(route.upstream)!, ctx))),
        continues: route?.assistantPrefix !== undefined && runtime.upstreams.get(route.upstream)?.format === openaiFormat,
      };
    });
  }

  /** Passes over the fallbacks before `i` and takes `i`, counted as a fallback from the upstream that could not answer; its route. */
  private take(left: readonly FallbackOption[], i: number): Route {
    const { id } = left[i];
    this.left.splice(0, i + 1);
    this.runtime.fleet.fellBack(this.ctx.route!.upstream, id);
    return this.runtime.routes.resolve(id, this.endpoint, this.ctx.version)!;
  }
}
