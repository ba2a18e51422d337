// Sending a routed request to its upstream, and to the route's fallback
// models when its backends cannot answer: before anything reached the
// client, the next fallback that may take it; after a stream was cut, one
// that continues it from the text already sent (routes[].continueOnFailure).
import type { Endpoint } from '../config/schema';
import { isGatewayError } from '../errors';
import type { Context, Fallbacks } from '../pipeline/context';
import { openaiFormat } from '../proxy/formats/openai';
import { estimateTokens } from '../proxy/usage';
import type { Route } from '../routing/routes';
import type { Runtime } from '../runtime';
import type { Exchange } from '../proxy/exchange';

const UPSTREAM_PATH: Record<Endpoint, string> = { chat: '/chat/completions', images: '/images/generations' };

/** Sends the request on its route; a request of another client protocol in the format its exchange chooses for that upstream. */
export function forwardTo(runtime: Runtime, ctx: Context, endpoint: Endpoint, route: Route, model: string, exchange?: Exchange): void {
  const upstream = runtime.upstreams.get(route.upstream)!;
  const format = exchange === undefined ? upstream.format : exchange.formatFor(upstream);
  upstream.forward(ctx, format.path ?? UPSTREAM_PATH[endpoint], format.requestBody(ctx, route.upstreamModel ?? model), format);
}

/**
 * Failures that say the backends could not answer, not that the request is
 * wrong: a fallback may. A 4xx only with a code the route names (failoverOn).
 */
const fallsBack = (err: unknown, failoverOn: readonly string[]): boolean => isGatewayError(err) && (
  err.reason === 'upstream_error' || err.reason === 'upstream_unavailable' || err.reason === 'upstream_timeout'
  || (err.reason === 'upstream_rejected' && (err.status === 429 || (err.details?.backendCode !== undefined && failoverOn.includes(err.details.backendCode)))));

/** Failures of a stream under way that a fallback could make good: cut, broken off with an error event, or stalled. */
const CUT = new Set(['upstream_error', 'upstream_timeout']);

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

  constructor(private readonly runtime: Runtime, private readonly ctx: Context, private readonly endpoint: Endpoint, route: Route, private readonly exchange?: Exchange) {
    this.left = [...route.fallbacks];
    this.dialect = route.dialect;
    this.failoverOn = route.failoverOn;
    // Continuing a cut stream is a chat completion's: another protocol's stream ends with its own failure events.
    this.continues = route.continueOnFailure && ctx.stream && ctx.protocol === 'chat' && ctx.chat !== undefined && (ctx.chat.model_params.n ?? 1) === 1;
    if (this.continues) ctx.forwarding.relayedText = '';
  }

  /** Nothing reached the client yet: the next fallback answers instead. The answer names it, and its usage is charged to it. */
  tryNext(err: unknown): boolean {
    const { ctx, runtime } = this;
    if (!fallsBack(err, this.failoverOn) || ctx.closed) return false;
    for (let id = this.left.shift(); id !== undefined; id = this.left.shift()) {
      const next = runtime.routes.resolve(id, this.endpoint, ctx.version);
      if (next === undefined || !ctx.principal!.mayUse(id) || (this.dialect === 'openai' && next.dialect !== 'openai')) continue;
      if (this.exchange !== undefined && !this.exchange.serves(runtime.upstreams.get(next.upstream)!, ctx)) continue;
      runtime.fleet.fellBack(ctx.route!.upstream, id);
      this.switchTo(id, next, () => forwardTo(runtime, ctx, this.endpoint, next, id, this.exchange));
      return true;
    }
    return false;
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
    const { ctx, runtime } = this;
    const f = ctx.forwarding;
    const prefix = f.relayedText;
    if (!this.continues) return false;
    this.continues = false;
    if (ctx.closed || prefix === undefined || prefix === '' || !isGatewayError(err) || !CUT.has(err.reason)) return false;
    for (let id = this.left.shift(); id !== undefined; id = this.left.shift()) {
      const next = runtime.routes.resolve(id, 'chat', ctx.version);
      const upstream = next && runtime.upstreams.get(next.upstream);
      if (next?.assistantPrefix === undefined || upstream?.format !== openaiFormat || !ctx.principal!.mayUse(id)) continue;
      runtime.fleet.fellBack(ctx.route!.upstream, id);
      f.relayedText = undefined;
      f.continuation = { prefixTokens: estimateTokens(prefix.length), cause: err, charsAtStart: f.streamedChars };
      this.switchTo(id, next, () => {
        const body = JSON.parse(upstream.format.requestBody(ctx, next.upstreamModel ?? id)) as { messages: unknown[] };
        body.messages.push({ role: 'assistant', content: prefix });
        upstream.forward(ctx, UPSTREAM_PATH.chat, JSON.stringify({ ...body, ...next.assistantPrefix!.params }));
      });
      return true;
    }
    return false;
  }
}
