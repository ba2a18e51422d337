// POST /v1/responses: OpenAI's Responses API. The body is decoded once into
// the request view the policy reads (ctx.chat: the conversation translated to
// chat completions, with an earlier turn's items when it continues one;
// ctx.texts: every text it forwards), then routed and forwarded like chat,
// in the protocol its backend serves (src/proxy/exchanges/responses.ts).
import type { NextFunction, Request, Response } from 'express';
import { itemTexts, newResponseId, parseResponsesRequest, responsesTexts, toChat, type StoredItem } from '../protocols/responses';
import { ResponsesExchange } from '../proxy/exchanges/responses';
import { routeAndForward, routeOf, type ApiRequest } from './handlers';

export async function responses(req: Request, res: Response, next: NextFunction): Promise<void> {
  const r = req as ApiRequest;
  const { sluice: ctx, runtime } = r;
  const request = parseResponsesRequest(req.body);
  const route = routeOf(r, 'chat');
  const keeper = runtime.responses;
  const history: StoredItem[] | undefined = request.previous_response_id && keeper !== undefined
    ? await keeper.continueFrom(ctx, request.previous_response_id) : undefined;
  // A backend that serves the API takes its hosted tools; only a translation drops or refuses them.
  const native = route !== undefined && runtime.upstreams.get(route.upstream)!.apis.includes('responses');
  const { messages, params, dropped } = toChat(request, { hostedTools: native ? 'drop' : route?.hostedTools ?? 'drop', history });
  const texts: string[] = [];
  responsesTexts(request, texts);
  if (history !== undefined) itemTexts(history, texts);
  const stream = request.stream === true;
  ctx.chat = { model: request.model, messages, stream, model_params: params, texts };
  ctx.texts = texts;
  ctx.model = request.model;
  ctx.stream = stream;
  if (!native) runtime.dropped.report(ctx, dropped);
  const exchange = new ResponsesExchange({ request, id: newResponseId(), createdAt: Math.floor(Date.now() / 1000), history }, keeper);
  await routeAndForward(r, res, next, 'chat', route, exchange);
}
