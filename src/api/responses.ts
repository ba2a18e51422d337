// POST /v1/responses: OpenAI's Responses API. The body is decoded once into
// the request view the policy reads (ctx.chat: the conversation translated to
// chat completions, with an earlier turn's items when it continues one;
// ctx.texts: every text it forwards), then routed and forwarded like chat,
// in the protocol its backend serves (src/proxy/exchanges/responses.ts).
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../contract/errors';
import { newResponseId, parseResponsesRequest, type StoredItem } from '../protocols/responses';
import { ResponsesExchange } from '../proxy/exchanges/responses';
import { cancelResponse, deleteResponse, getResponse, listInputItems, ownerOf } from '../responses-store';
import { routeAndForward, routeOf, type ApiRequest } from './handlers';
import { sendJson } from '../plumbing/send-json';
import type { StoredTurns } from './stored-turns';

export async function responses(req: Request, res: Response, next: NextFunction): Promise<void> {
  const r = req as ApiRequest;
  const { sluice: ctx, runtime } = r;
  const request = parseResponsesRequest(req.body);
  const route = routeOf(r, 'chat');
  const keeper = runtime.responses;
  // A backend that serves the API takes its hosted tools; only a translation drops or refuses them.
  const native = route !== undefined && runtime.upstreams.get(route.upstream)!.apis.includes('responses');
  const previous = request.previous_response_id ?? undefined;
  if (previous !== undefined && !keeper.keeps && !native) {
    throw new GatewayError('invalid_request', 'This gateway keeps no responses (responses.store is off), so previous_response_id cannot be continued here: send the whole conversation in input.', { param: 'previous_response_id' });
  }
  // Kept here: the backend gets the conversation whole. Not kept: a native backend resolves it itself,
  // and gets only an id it gave the caller's owner through this gateway.
  const history: StoredItem[] | undefined = previous !== undefined && keeper.keeps ? await keeper.continueFrom(ctx, previous) : undefined;
  if (previous !== undefined && !keeper.keeps) await keeper.relayedFrom(ctx, previous);
  const turn = { request, id: newResponseId(), createdAt: Math.floor(Date.now() / 1000), history };
  const exchange = new ResponsesExchange(turn, keeper, native ? 'drop' : route?.hostedTools ?? 'drop');
  const { chat, texts, dropped } = exchange.view();
  ctx.source = exchange;
  ctx.chat = chat;
  ctx.texts = texts;
  ctx.model = request.model;
  ctx.stream = chat.stream;
  if (!native) runtime.dropped.report(ctx, dropped);
  await routeAndForward(r, res, next, 'chat', route, exchange);
}

/** The query string as an object (the router runs without Express's request helpers). */
const queryOf = (req: Request): Record<string, string> => Object.fromEntries(new URL(req.url ?? '/', 'http://sluice').searchParams);

const idOf = (req: Request): string => String((req.params as { id?: string }).id ?? '');

/** The stored-response endpoints: each reads only what the caller's org stored (another's id is a 404). */
function storedResponse(answer: (turns: StoredTurns, owner: string, id: string, req: Request) => Promise<unknown>) {
  return async (req: Request, res: Response): Promise<void> => {
    const { sluice: ctx, runtime } = req as ApiRequest;
    sendJson(res, 200, await answer(runtime.responses, ownerOf(ctx.principal!), idOf(req), req));
  };
}

export const retrieveResponse = storedResponse((t, owner, id, req) => getResponse(t.state.store, owner, id, queryOf(req)));
export const removeResponse = storedResponse((t, owner, id) => deleteResponse(t.state.store, owner, id));
export const responseInputItems = storedResponse((t, owner, id, req) => listInputItems(t.state.store, owner, id, queryOf(req)));
export const cancelRunningResponse = storedResponse((t, owner, id) => cancelResponse(t.state, owner, id));
