// The API endpoints, each a short sequence: parse the body, check the key may
// use the model, find the route, run the request hooks, forward.
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../errors';
import { authorizeModel } from '../auth/keys';
import type { Endpoint } from '../config/schema';
import type { Context } from '../pipeline/context';
import { runRequestHooks } from '../pipeline/runner';
import type { Runtime } from '../runtime';
import { parseChatRequest } from './chat-request';
import { parseImageRequest } from './image-request';
import { sendJson } from './json';

const UPSTREAM_PATH: Record<Endpoint, string> = { chat: '/chat/completions', images: '/images/generations' };

export interface ApiRequest extends Request {
  sluice: Context;
  runtime: Runtime;
}

async function routeAndForward(req: ApiRequest, res: Response, next: NextFunction, endpoint: Endpoint): Promise<void> {
  const ctx = req.sluice;
  const runtime = req.runtime;
  const model = ctx.model!;
  authorizeModel(ctx.principal!, model);
  const route = runtime.routes.resolve(model, endpoint, ctx.version);
  if (route === undefined) {
    throw new GatewayError('model_not_found', `Model "${model}" is not available for ${endpoint === 'chat' ? 'chat completions' : 'image generation'} on /${ctx.version}. GET /${ctx.version}/models lists the models your key may use.`, { param: 'model' });
  }
  ctx.route = route;
  await runRequestHooks(runtime.pipeline, ctx);
  if (ctx.closed) return; // the client left while a hook was waiting
  const upstream = runtime.upstreams.get(route.upstream)!;
  ctx.fail = next;
  upstream.forward(ctx, req, res, UPSTREAM_PATH[endpoint], upstream.format.requestBody(ctx, route.upstreamModel ?? model));
}

export async function chatCompletions(req: Request, res: Response, next: NextFunction): Promise<void> {
  const r = req as ApiRequest;
  const chat = parseChatRequest(req.body);
  r.sluice.chat = chat;
  r.sluice.model = chat.model;
  r.sluice.stream = chat.stream;
  await routeAndForward(r, res, next, 'chat');
}

export async function imageGenerations(req: Request, res: Response, next: NextFunction): Promise<void> {
  const r = req as ApiRequest;
  const image = parseImageRequest(req.body);
  r.sluice.image = image;
  r.sluice.model = image.model;
  await routeAndForward(r, res, next, 'images');
}

export function listModels(req: Request, res: Response): void {
  const { sluice: ctx, runtime } = req as ApiRequest;
  const data = runtime.routes.listed(ctx.version)
    .filter((m) => ctx.principal!.mayUse(m.id))
    .map((m) => ({ id: m.id, object: 'model', created: 0, owned_by: 'sluice', endpoints: m.endpoints }));
  sendJson(res, 200, { object: 'list', data });
}
