// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API.
// The body is decoded once into the request view the policy reads (ctx.chat:
// the conversation translated to chat completions; ctx.texts: every text it
// forwards, system and tool results included), then routed and forwarded
// like chat, in the protocol its backend serves (src/proxy/exchanges/messages.ts).
// count_tokens is answered by the gateway: an estimate from the same texts.
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../errors';
import { authorizeModel } from '../auth/keys';
import { countTokens } from '../protocols/messages/count-tokens';
import { parseCountTokensRequest, parseMessagesRequest } from '../protocols/messages/request';
import { MessagesExchange } from '../proxy/exchanges/messages';
import { routeAndForward, routeOf, type ApiRequest } from './handlers';
import { sendJson } from '../request/send-json';

export async function messages(req: Request, res: Response, next: NextFunction): Promise<void> {
  const r = req as ApiRequest;
  const { sluice: ctx, runtime } = r;
  const request = parseMessagesRequest(req.body);
  const route = routeOf(r, 'chat');
  const native = route !== undefined && runtime.upstreams.get(route.upstream)!.apis.includes('messages');
  const exchange = new MessagesExchange(request, {
    serverTools: native ? 'drop' : route?.hostedTools ?? 'drop',
    assistantPrefix: route?.assistantPrefix?.params,
  });
  const { chat, texts, dropped } = exchange.view();
  ctx.source = exchange;
  ctx.chat = chat;
  ctx.texts = texts;
  ctx.model = request.model;
  ctx.stream = chat.stream;
  if (!native) runtime.dropped.report(ctx, dropped);
  await routeAndForward(r, res, next, 'chat', route, exchange);
}

export function countMessageTokens(req: Request, res: Response): void {
  const r = req as ApiRequest;
  const { sluice: ctx } = r;
  const request = parseCountTokensRequest(req.body);
  ctx.model = request.model;
  authorizeModel(ctx.principal!, request.model);
  if (routeOf(r, 'chat') === undefined) {
    throw new GatewayError('model_not_found', `Model "${request.model}" is not available to this key. GET /v1/models lists the models your key may use.`, { param: 'model' });
  }
  sendJson(res, 200, countTokens(request));
}
