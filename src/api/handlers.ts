// The API endpoints, each a short sequence: parse the body, check the key may
// use the model, find the route, run the request hooks, forward.
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../contract/errors';
import { authorizeModel } from '../auth/keys';
import { ENDPOINTS, type Endpoint } from '../config/schema';
import type { Context } from '../pipeline/context';
import { runOutputRulesHooks, runRequestHooks } from '../pipeline/runner';
import type { ApiRuntime } from './api-runtime';
import { parseChatRequest } from './chat-request';
import { parseImageRequest } from './image-request';
import { MODEL_ID_MAX } from '../request/validate';
import { endUserOf } from '../request/end-user';
import type { ListedModel, Route } from '../routing/routes';
import { sendJson } from '../plumbing/send-json';
import { FallbackChain, forwardTo } from './forward';
import type { Exchange } from '../proxy/exchange';

export interface ApiRequest<R extends ApiRuntime = ApiRuntime> extends Request {
  sluice: Context;
  runtime: R;
}

/**
 * The route the body's model names, looked up before the body is validated:
 * the route's dialect decides which message forms are valid. Errors keep their
 * order (the body first, then the key's allow-list, then the route).
 */
export function routeOf(req: ApiRequest, endpoint: Endpoint): Route | undefined {
  const model = (req.body as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' && model.length <= MODEL_ID_MAX ? req.runtime.routes.resolve(model, endpoint, req.sluice.version) : undefined;
}

/**
 * Runs the request hooks. A promise only when one of them was asynchronous:
 * synchronous hooks stay synchronous; onFinish waits on the promise.
 */
export function startRequestHooks(runtime: ApiRuntime, ctx: Context): Promise<void> | undefined {
  const pending = runRequestHooks(runtime.pipeline, ctx);
  if (pending !== undefined) ctx.requestHooks = pending;
  return pending;
}

export async function routeAndForward(req: ApiRequest, res: Response, next: NextFunction, endpoint: Endpoint, route: Route | undefined, exchange?: Exchange): Promise<void> {
  const ctx = req.sluice;
  const runtime = req.runtime;
  const model = ctx.model!;
  authorizeModel(ctx.principal!, model);
  if (route === undefined) {
    throw new GatewayError('model_not_found', `Model "${model}" is not available for ${ENDPOINT_NAMES[endpoint]} on /${ctx.version}. GET /${ctx.version}/models lists the models your key may use.`, { param: 'model' });
  }
  if (exchange !== undefined && !exchange.serves(runtime.upstreams.get(route.upstream)!, ctx)) throw cannotServe(model);
  ctx.route = route;
  ctx.user = endUserOf(ctx.principal!.entry, ctx.protocol, req.body, req.headers);
  const pending = startRequestHooks(runtime, ctx);
  if (pending !== undefined) {
    await pending;
    if (ctx.closed) return; // the client left while a hook was waiting
  }
  ctx.forwarding.fail = next;
  ctx.trace?.sent(ctx);
  if (runtime.pipeline.outputRules.length > 0) ctx.forwarding.output = runOutputRulesHooks(runtime.pipeline, ctx);
  if (route.fallbacks.length > 0) ctx.forwarding.fallbacks = new FallbackChain(runtime, ctx, endpoint, route, exchange);
  forwardTo(runtime, ctx, endpoint, route, model, exchange);
}

/** What each endpoint serves, as a refusal names it. */
const ENDPOINT_NAMES: Record<Endpoint, string> = {
  chat: 'chat completions', images: 'image generation', embeddings: 'embeddings', rerank: 'rerank', score: 'scores', moderations: 'moderations',
  transcriptions: 'transcriptions', translations: 'translations', speech: 'speech',
};

/** A model whose backend speaks only the service interface's chat, asked for what that cannot say (tools, tool results, parts). */
const cannotServe = (model: string): GatewayError => new GatewayError('invalid_request',
  `The backend of model "${model}" takes only text conversations (system, user and assistant messages, no tools): send this request to a model whose backend serves chat completions in OpenAI's format or this API.`);

export async function chatCompletions(req: Request, res: Response, next: NextFunction): Promise<void> {
  const r = req as ApiRequest;
  const route = routeOf(r, 'chat');
  const chat = parseChatRequest(req.body, route?.dialect, route?.fields);
  r.sluice.chat = chat;
  r.sluice.texts = chat.texts;
  r.sluice.model = chat.model;
  r.sluice.stream = chat.stream;
  await routeAndForward(r, res, next, 'chat', route);
}

export async function imageGenerations(req: Request, res: Response, next: NextFunction): Promise<void> {
  const r = req as ApiRequest;
  const route = routeOf(r, 'images');
  const image = parseImageRequest(req.body, route?.fields);
  r.sluice.image = image;
  r.sluice.texts = image.texts;
  r.sluice.model = image.model;
  await routeAndForward(r, res, next, 'images', route);
}

const modelObject = (m: ListedModel) => ({ id: m.id, object: 'model', created: 0, owned_by: 'sluice', endpoints: m.endpoints });

export function listModels(req: Request, res: Response): void {
  const { sluice: ctx, runtime } = req as ApiRequest;
  const data = runtime.routes.listed(ctx.version).filter((m) => ctx.principal!.mayUse(m.id)).map(modelObject);
  sendJson(res, 200, { object: 'list', data });
}

/** GET /v{1,2}/models/{id}: one model the key may use; ids may hold slashes (org/name), sent encoded or not. */
export function retrieveModel(req: Request, res: Response): void {
  const { sluice: ctx, runtime } = req as ApiRequest;
  const segments = (req.params as { id?: string | string[] }).id;
  const id = Array.isArray(segments) ? segments.join('/') : segments ?? '';
  // Any id a route serves, glob routes included: retrieving must agree with what a request would reach.
  const endpoints = id.length <= MODEL_ID_MAX && ctx.principal!.mayUse(id) ? ENDPOINTS.filter((e) => runtime.routes.resolve(id, e, ctx.version) !== undefined) : [];
  if (endpoints.length === 0) {
    throw new GatewayError('model_not_found', `Model "${id.slice(0, MODEL_ID_MAX)}" is not available to this key on /${ctx.version}. GET /${ctx.version}/models lists the models your key may use.`, { param: 'model' });
  }
  sendJson(res, 200, modelObject({ id, endpoints }));
}
