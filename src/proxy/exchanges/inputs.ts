// The input endpoints' exchange (embeddings, rerank, score, moderations): the
// request view's body sent as it stands (the texts as the transform stage
// left them, the model renamed) to the endpoint's own path on a backend that
// speaks OpenAI's format, and the answer relayed as the backend wrote it
// (base64 embeddings untouched), its usage read, else estimated from the
// texts and marked so. Nothing is generated: no stream, no output to cap.
//
//   routeAndForward(req, res, next, 'embeddings', route, INPUT_EXCHANGES.embeddings);
import type { InputEndpoint } from '../../config/schema';
import type { Context } from '../../pipeline/context';
import { estimateUsage, readInputUsage } from '../../request/usage';
import type { Exchange } from '../exchange';
import { isRecord, parseBackendJson } from '../exchange';
import type { Format, JsonAnswer, StreamTransformer } from '../formats/format';
import { openaiFormat } from '../formats/openai';
import { badAnswer } from '../status';
import type { Upstream } from '../upstream';

class InputsExchange implements Exchange, Format {
  readonly protocol = 'chat';

  /** `list`: the answer's array of results, without which it is not an answer. */
  constructor(private readonly endpoint: InputEndpoint, private readonly list: 'data' | 'results') {}

  /** Only a backend in OpenAI's format serves these paths (the config refuses a route that says otherwise). */
  serves(upstream: Upstream): boolean {
    return upstream.format === openaiFormat;
  }

  formatFor(): Format {
    return this;
  }

  requestBody(ctx: Context, upstreamModel: string): string {
    return JSON.stringify({ ...ctx.inputs!.body, model: upstreamModel });
  }

  respondJson(ctx: Context, text: string, upstream: string): JsonAnswer {
    const body = parseBackendJson(text, upstream);
    if (!isRecord(body) || !Array.isArray(body[this.list])) throw badAnswer(upstream, `no ${this.list}[]`);
    const usage = readInputUsage(body.usage) ?? estimateUsage(ctx, 0);
    // The backend's name for a renamed model stays the operator's: the client gets its own id (the body is copied only then).
    const renamed = ctx.route?.upstreamModel;
    return { body: renamed !== undefined && body.model === renamed ? JSON.stringify({ ...body, model: ctx.model }) : text, usage };
  }

  streamTransformer(_ctx: Context, upstream: string): StreamTransformer {
    // No input endpoint asks for a stream, and the call refuses an event stream to a request without one.
    throw badAnswer(upstream, `an event stream to ${this.endpoint}`);
  }
}

export const INPUT_EXCHANGES: Readonly<Record<InputEndpoint, Exchange>> = {
  embeddings: new InputsExchange('embeddings', 'data'),
  rerank: new InputsExchange('rerank', 'results'),
  score: new InputsExchange('score', 'data'),
  moderations: new InputsExchange('moderations', 'results'),
};
