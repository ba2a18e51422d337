// POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API.
// The body is decoded once into the request view the policy reads (ctx.chat:
// the conversation translated to chat completions; ctx.texts: every text it
// forwards, system and tool results included), then routed and forwarded
// like chat, in the protocol its backend serves (src/proxy/exchanges/messages.ts).
// count_tokens goes to a backend that serves Messages, else is answered by
// the gateway: an estimate from the same texts.
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../contract/errors';
import { authorizeModel } from '../auth/keys';
import { countTokens } from '../protocols/messages/count-tokens';
import { parseCountTokensRequest, parseMessagesRequest } from '../protocols/messages/request';
import { MessagesExchange } from '../proxy/exchanges/messages';
import { COUNT_TOKENS_PATH, CountTokens } from '../proxy/exchanges/count-tokens';
import { runCheckHooks } from '../pipeline/runner';
import { routeAndForward, routeOf, type ApiRequest } from './handlers';
import { sendJson } from '../plumbing/send-json';

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

/** Says that an answer is the gateway's estimate, not a backend's count. */
export const ESTIMATED_HEADER = 'x-sluice-estimated';

/**
 * count_tokens: relayed to a backend that serves Messages, whose own count
 * the client gets (after the transform and validate plugins, as for a
 * message: what the backend reads is redacted and filtered alike; no slot,
 * no budget, no record); else the gateway's estimate, marked as such.
 */
export async function countMessageTokens(req: Request, res: Response, next: NextFunction): Promise<void> {
  const r = req as ApiRequest;
  const { sluice: ctx, runtime } = r;
  const request = parseCountTokensRequest(req.body);
  ctx.model = request.model;
  authorizeModel(ctx.principal!, request.model);
  const route = routeOf(r, 'chat');
  if (route === undefined) {
    throw new GatewayError('model_not_found', `Model "${request.model}" is not available to this key. GET /v1/models lists the models your key may use.`, { param: 'model' });
  }
  const upstream = runtime.upstreams.get(route.upstream)!;
  if (!upstream.apis.includes('messages')) {
    res.setHeader(ESTIMATED_HEADER, 'true');
    return sendJson(res, 200, countTokens(request));
  }
  const count = new CountTokens(request);
  const { chat, texts } = count.view();
  ctx.source = count;
  ctx.chat = chat;
  ctx.texts = texts;
  ctx.route = route;
  const pending = runCheckHooks(runtime.pipeline, ctx);
  if (pending !== undefined) {
    ctx.requestHooks = pending;
    await pending;
    if (ctx.closed) return;
  }
  ctx.forwarding.fail = next;
  upstream.forward(ctx, COUNT_TOKENS_PATH, count.requestBody(ctx, route.upstreamModel ?? request.model), count);
}
