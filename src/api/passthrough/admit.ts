// A pass-through request under the gateway's policy, in the API's order: the
// body (read only when it is JSON, and left in the stream), the key's model
// allow-list, the request hooks (content filter over every string of the
// body, rate limits, ...); then the proxy. The key was checked on arrival.
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Response } from 'express';
import { GatewayError } from '../../contract/errors';
import { authorizeModel, type Principal } from '../../auth/keys';
import { isJsonType, mediaTypeProblem, parseJsonBody, tooLarge } from '../json-body';
import { startRequestHooks, type ApiRequest } from '../handlers';
import type { ApiRuntime } from '../api-runtime';
import type { PassthroughProxy } from './proxy';

/** What a pass-through route reads of the config in force: the API's, and a proxy per upstream it names. */
export interface PassthroughRuntime extends ApiRuntime {
  readonly passthroughProxies: ReadonlyMap<string, PassthroughProxy>;
}
import { MODEL_ID_MAX } from '../../request/validate';
import { jsonStrings } from './json-strings';
import { peekBody } from './peek-body';
import type { PassthroughRoute } from './routes';

const MULTIPART = /^multipart\/form-data\s*;/i;

const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

const refuseTooLarge = (res: Response, limit: number): GatewayError => {
  res.setHeader('connection', 'close'); // the rest of the body is not read
  return tooLarge(limit);
};

/**
 * The JSON body, read and left in the stream; undefined when there is none
 * or it is multipart (an upload: it passes unread). Any other type is a 415:
 * a body the policy cannot read must not reach a backend that might read it
 * as JSON anyway.
 */
async function jsonBodyOf(req: IncomingMessage, res: Response, limit: number): Promise<Record<string, unknown> | undefined> {
  if (!hasBody(req)) return undefined;
  const type = req.headers['content-type'];
  if (Number(req.headers['content-length'] ?? 0) > limit) throw refuseTooLarge(res, limit);
  if (!isJsonType(type)) {
    if (type !== undefined && MULTIPART.test(type)) return undefined;
    throw new GatewayError('unsupported_media_type', 'Send the request body as JSON (Content-Type: application/json) or as multipart/form-data.');
  }
  const problem = mediaTypeProblem(type, req.headers['content-encoding']);
  if (problem) throw problem;
  const bytes = await new Promise<Buffer>((resolve, reject) => peekBody(req, limit, (err, read) => {
    if (err?.reason === 'payload_too_large') res.setHeader('connection', 'close');
    return err ? reject(err) : resolve(read!);
  }));
  const body = parseJsonBody(bytes);
  if (body instanceof GatewayError) throw body;
  return body;
}

/** The body's `model`, when it names one; the allow-list checks it. */
function namedModel(body: Record<string, unknown> | undefined): string | undefined {
  const model = body?.model;
  if (model === undefined || model === null) return undefined;
  if (typeof model !== 'string' || model.length === 0 || model.length > MODEL_ID_MAX) {
    throw new GatewayError('invalid_request', `model must be a string of 1 to ${MODEL_ID_MAX} characters.`, { param: 'model' });
  }
  return model;
}

/**
 * A key limited to some models reaches only those: a request that names no
 * model is checked as the route's `model`, and refused when the route names
 * none, since the backend would choose one the gateway cannot check.
 */
function authorize(principal: Principal, model: string | undefined): void {
  if (model !== undefined) return authorizeModel(principal, model);
  if (principal.anyModel) return;
  throw new GatewayError('model_not_allowed', 'This API key may use only some models, and this request names none the gateway can check. Send "model" in a JSON body, or ask the gateway operator.', { param: 'model' });
}

export async function passThrough(req: ApiRequest<PassthroughRuntime>, res: Response, next: NextFunction, route: PassthroughRoute): Promise<void> {
  const { sluice: ctx, runtime } = req;
  const body = await jsonBodyOf(req, res, route.bodyLimit);
  const model = namedModel(body) ?? route.model;
  if (body !== undefined) ctx.texts = jsonStrings(body);
  authorize(ctx.principal!, model);
  ctx.model = model;
  const pending = startRequestHooks(runtime, ctx);
  if (pending !== undefined) await pending;
  if (ctx.closed) return; // the client left while the body was read or a hook was waiting
  ctx.forwarding.fail = next;
  const unread = body === undefined && hasBody(req);
  runtime.passthroughProxies.get(route.upstream)!.forward(ctx, req, res, unread ? route.bodyLimit : undefined);
}
