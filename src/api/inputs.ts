// POST /v{1,2}/embeddings, /rerank, /score and /moderations: the body decoded
// once into the request view (ctx.inputs; ctx.texts: each input, the query
// and each document), then routed and forwarded as chat is: the key's
// allow-list, the request hooks (content filter, PII, budgets), the route's
// fallbacks, one usage record (docs/endpoints.md).
import type { NextFunction, Request, Response } from 'express';
import type { InputEndpoint } from '../config/schema';
import { INPUT_EXCHANGES } from '../proxy/exchanges/inputs';
import { parseInputsRequest } from './input-requests';
import { routeAndForward, routeOf, type ApiRequest } from './handlers';

/** The Express handler of one input endpoint. */
export function inputsEndpoint(endpoint: InputEndpoint) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const r = req as ApiRequest;
    const ctx = r.sluice;
    const route = routeOf(r, endpoint);
    const inputs = parseInputsRequest(endpoint, req.body, r.runtime.endpointLimits);
    ctx.inputs = inputs;
    ctx.texts = inputs.texts;
    ctx.model = inputs.model;
    await routeAndForward(r, res, next, endpoint, route, INPUT_EXCHANGES[endpoint]);
  };
}
