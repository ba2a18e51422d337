// Builds the Express app from the gateway's state; no listening here, so tests
// mount it on their own sockets. A request takes the runtime current at its
// arrival and keeps it to the end.
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { AUDIO_ENDPOINTS, INPUT_ENDPOINTS, type Endpoint, type Version } from './config/schema';
import { GatewayError } from './contract/errors';
import { Context, requestIdOf } from './pipeline/context';
import { runFinishHooks } from './pipeline/runner';
import type { RequestContext } from './contract/plugin';
import type { Runtime } from './runtime';
import { chatCompletions, imageGenerations, listModels, retrieveModel, type ApiRequest } from './api/handlers';
import { apiKeyOf, authenticate, authorizationOf, MESSAGES_KEY_FORMS } from './auth/keys';
import type { ClientProtocol } from './contract/types';
import { countMessageTokens, messages } from './api/messages';
import { cancelRunningResponse, removeResponse, responseInputItems, responses, retrieveResponse } from './api/responses';
import { errorMiddleware, lastResort } from './api/errors';
import { sendJson } from './plumbing/send-json';
import { logAccess } from './api/access-log';
import { passThrough } from './api/passthrough/admit';
import { inputsEndpoint } from './api/inputs';
import { speech, uploadEndpoint } from './api/audio';
import { requestCost } from './pricing/request-cost';

export interface GatewayState {
  runtime: Runtime;
  /** False while starting and once draining: /readyz answers 503. */
  ready: boolean;
  logger: Logger;
  /** API requests in flight, so a drain can end the streams still open at its deadline. */
  active: Set<Context>;
}

const VERSIONS: readonly Version[] = ['v1', 'v2'];

/** What a request's context names as its endpoint: an API endpoint, the model list, or a pass-through route. */
type ContextEndpoint = RequestContext['endpoint'];

/**
 * Starts an API request: its context, the runtime it keeps, its trace when
 * sampled, and its finish when the response closes. `route`: the path
 * template the request matched (an API route's, or a pass-through route's).
 */
function begin(state: GatewayState, version: Version, endpoint: ContextEndpoint, req: Request, res: Response, protocol: ClientProtocol, route: string): Context {
  const runtime = state.runtime;
  const ctx = new Context(version, endpoint, req, res, protocol);
  const tracing = runtime.tracing;
  if (tracing !== undefined) ctx.trace = tracing.start(ctx, req, route);
  // Anthropic's SDKs read the request id from request-id.
  if (protocol === 'messages') res.setHeader('request-id', ctx.id);
  (req as ApiRequest<Runtime>).runtime = runtime;
  if (!state.ready) res.setHeader('connection', 'close');
  runtime.hold();
  state.active.add(ctx);
  res.once('close', () => {
    state.active.delete(ctx);
    const outcome = ctx.finish();
    if (outcome === undefined) return runtime.release();
    const finish = (): void => {
      runtime.admission.release(ctx);
      ctx.cost = requestCost(runtime.prices, ctx, outcome);
      runFinishHooks(runtime.pipeline, ctx, outcome, state.logger);
      runtime.spend.record(ctx, outcome);
      logAccess(state.logger, ctx, outcome);
      ctx.trace?.finish(ctx, outcome, ctx.forwarding);
      runtime.release();
    };
    // onFinish comes after every onRequest that started has settled: what a hook took, onFinish can give back.
    if (ctx.requestHooks === undefined) finish();
    else ctx.requestHooks.then(finish, finish);
  });
  return ctx;
}

/** begin, then the key: the context, or undefined when the key was refused (the 401 went to next). */
function beginWithKey(state: GatewayState, version: Version, endpoint: ContextEndpoint, req: Request, res: Response, next: NextFunction, protocol: ClientProtocol, route: string): Context | undefined {
  const ctx = begin(state, version, endpoint, req, res, protocol, route);
  try {
    const { keys } = (req as ApiRequest<Runtime>).runtime;
    ctx.principal = protocol === 'messages' ? authenticate(keys, apiKeyOf(req), MESSAGES_KEY_FORMS) : authenticate(keys, authorizationOf(req));
  } catch (err) {
    next(err);
    return undefined;
  }
  return ctx;
}

type EndpointHandler = (req: Request, res: Response, next: NextFunction) => Promise<void> | void;

/**
 * One Express handler per API route: context, key, body, then the endpoint.
 * The steps run in sequence here rather than as separate router layers: this
 * is the hot path, and each router hop costs more than the step it runs.
 */
function apiRoute(state: GatewayState, path: string, version: Version, endpoint: Endpoint | 'models', handle: EndpointHandler, readsBody: boolean, protocol: ClientProtocol = 'chat') {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (beginWithKey(state, version, endpoint, req, res, next, protocol, path) === undefined) return;
    const runtime = (req as ApiRequest<Runtime>).runtime;
    const run = (err?: unknown): void => {
      if (err) return next(err);
      try {
        const pending = handle(req, res, next);
        if (pending) pending.catch(next);
      } catch (thrown) {
        next(thrown);
      }
    };
    if (readsBody) runtime.parseJson(req, res, run);
    else run();
  };
}

function methodNotAllowed(allow: string) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('allow', allow);
    next(new GatewayError('method_not_allowed', `This path accepts ${allow} only.`));
  };
}

/**
 * The operator's pass-through routes (docs/passthrough.md), looked up
 * in the runtime current at arrival, so a reload adds and removes them. A path
 * no route serves goes on to the 404.
 */
function passthroughRoutes(state: GatewayState) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const found = state.runtime.passthrough.match(req.method, req.url);
    if (found === undefined) return next();
    if ('allow' in found) return methodNotAllowed(found.allow)(req, res, next);
    if (beginWithKey(state, found.route.version, 'passthrough', req, res, next, 'chat', state.runtime.config.passthrough[found.route.index].path) === undefined) return;
    passThrough(req as ApiRequest<Runtime>, res, next, found.route).catch(next);
  };
}

/**
 * A pass-through route configured on an input endpoint's path (as before the
 * gateway served it) keeps serving it: the operator's route wins until it is
 * removed (docs/endpoints.md#pass-through-routes).
 */
function passthroughFirst(state: GatewayState) {
  const passthrough = passthroughRoutes(state);
  return (req: Request, res: Response, next: NextFunction): void => {
    const found = state.runtime.passthrough.match(req.method, req.url);
    if (found !== undefined && 'route' in found) passthrough(req, res, next);
    else next();
  };
}

const MCP_METHODS = new Set(['POST', 'GET', 'DELETE']);

/** /mcp (every server a key may use) and /mcp/<server>: the runtime current at arrival serves it to the end, as for the API. */
function mcpRoute(state: GatewayState) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!MCP_METHODS.has(req.method)) return methodNotAllowed('POST, GET, DELETE')(req, res, next);
    const runtime = state.runtime;
    runtime.hold();
    res.once('close', () => runtime.release());
    if (!state.ready) res.setHeader('connection', 'close');
    if (req.params.server === undefined) runtime.mcp.handleFederated(req, res, runtime.keys, next);
    else runtime.mcp.handle(req, res, String(req.params.server), runtime.keys, next);
  };
}

/** What the HTTP server calls for every request. */
export type GatewayHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The gateway is an Express router mounted straight on the node:http server,
 * not an express() app: an app re-prototypes every req and res to add helpers
 * the gateway does not use, and that alone measured about 140 µs of CPU per
 * request, as much as a whole bare pass-through proxy. Routing, the middleware
 * contract, async handlers and the 4-argument error middleware are Express's,
 * unchanged. The API paths without parameters are looked up in one map first
 * (a method's, then the exact path, query string and all): a request to one
 * goes to its handler at once and errors to the same error middleware; any
 * other request (a query string, HEAD, a parameter, a typo) takes the router.
 */
export function createApp(state: GatewayState): GatewayHandler {
  // Paths match exactly: /V1/chat/completions and /v1/chat/completions/ are not the endpoint.
  const router = express.Router({ caseSensitive: true, strict: true });
  // API routes first: they are the traffic. Every response carries an x-request-id
  // (API requests get theirs with the context; the rest below or in the error handler).
  // A path with no parameter is also resolved once, here: a request to exactly it goes
  // to its handler without the router's walk over its layers (see `direct` below).
  const direct = new Map<string, Map<string, EndpointHandler>>();
  const api = (method: 'get' | 'post' | 'delete', path: string, version: Version, endpoint: Endpoint | 'models', handle: EndpointHandler, readsBody: boolean, protocol?: ClientProtocol): void => {
    const handler = apiRoute(state, path, version, endpoint, handle, readsBody, protocol);
    router[method](path, handler);
    if (/[:*{]/.test(path)) return;
    const verb = method.toUpperCase();
    if (!direct.has(verb)) direct.set(verb, new Map());
    direct.get(verb)!.set(path, handler);
  };
  for (const v of VERSIONS) {
    api('post', `/${v}/chat/completions`, v, 'chat', chatCompletions, true);
    api('post', `/${v}/images/generations`, v, 'images', imageGenerations, true);
    // A pass-through route may serve an input endpoint's path instead (docs/endpoints.md): those take the router.
    for (const e of INPUT_ENDPOINTS) router.post(`/${v}/${e}`, passthroughFirst(state), apiRoute(state, `/${v}/${e}`, v, e, inputsEndpoint(e), true));
    // An upload reads its own body (multipart, bounded per endpoint); speech's is JSON.
    for (const e of ['transcriptions', 'translations'] as const) router.post(`/${v}/audio/${e}`, passthroughFirst(state), apiRoute(state, `/${v}/audio/${e}`, v, e, uploadEndpoint(e), false));
    router.post(`/${v}/audio/speech`, passthroughFirst(state), apiRoute(state, `/${v}/audio/speech`, v, 'speech', speech, true));
    api('get', `/${v}/models`, v, 'models', listModels, false);
    api('get', `/${v}/models/*id`, v, 'models', retrieveModel, false);
  }
  // The agents' protocols, where their clients look for them: OpenAI's Responses API and Anthropic's Messages API.
  api('post', '/v1/responses', 'v1', 'chat', responses, true, 'responses');
  api('get', '/v1/responses/:id', 'v1', 'models', retrieveResponse, false, 'responses');
  api('delete', '/v1/responses/:id', 'v1', 'models', removeResponse, false, 'responses');
  api('get', '/v1/responses/:id/input_items', 'v1', 'models', responseInputItems, false, 'responses');
  api('post', '/v1/responses/:id/cancel', 'v1', 'models', cancelRunningResponse, false, 'responses');
  api('post', '/v1/messages', 'v1', 'chat', messages, true, 'messages');
  api('post', '/v1/messages/count_tokens', 'v1', 'models', countMessageTokens, true, 'messages');
  // MCP servers (docs/mcp.md): the transport's three methods on one path per server.
  router.all('/mcp/:server', mcpRoute(state));
  router.all('/mcp', mcpRoute(state));
  // Where MCP clients find the authorization server (RFC 9728), when mcp.oauth is set; else a 404.
  router.get('/.well-known/oauth-protected-resource{/*path}', (req, res, next) => state.runtime.mcp.identity.serveMetadata(req, res, () => next()));
  router.get('/healthz', (req, res) => { requestIdOf(req, res); sendJson(res, 200, { status: 'ok' }); });
  router.get('/readyz', (req, res) => { requestIdOf(req, res); sendJson(res, state.ready ? 200 : 503, { status: state.ready ? 'ready' : 'not ready' }); });
  // A GET route answers HEAD too, so Allow names both.
  for (const v of VERSIONS) {
    router.all(`/${v}/chat/completions`, methodNotAllowed('POST'));
    router.all(`/${v}/images/generations`, methodNotAllowed('POST'));
    router.all(`/${v}/models`, methodNotAllowed('GET, HEAD'));
    router.all(`/${v}/models/*id`, methodNotAllowed('GET, HEAD'));
  }
  router.all('/v1/responses', methodNotAllowed('POST'));
  router.all('/v1/responses/:id', methodNotAllowed('GET, HEAD, DELETE'));
  router.all('/v1/responses/:id/input_items', methodNotAllowed('GET, HEAD'));
  router.all('/v1/responses/:id/cancel', methodNotAllowed('POST'));
  router.all('/v1/messages', methodNotAllowed('POST'));
  router.all('/v1/messages/count_tokens', methodNotAllowed('POST'));
  router.all('/healthz', methodNotAllowed('GET, HEAD'));
  router.all('/readyz', methodNotAllowed('GET, HEAD'));
  router.use(passthroughRoutes(state));
  // After the pass-through routes: one of them may serve another method on an input endpoint's path.
  for (const v of VERSIONS) for (const e of [...INPUT_ENDPOINTS, ...AUDIO_ENDPOINTS.map((a) => `audio/${a}`)]) router.all(`/${v}/${e}`, methodNotAllowed('POST'));
  router.use((req, _res, next) => {
    const path = (req.url ?? '/').split('?')[0].slice(0, 200);
    next(new GatewayError('not_found', `No such endpoint: ${req.method} ${path}. See the README for the endpoints this gateway serves.`));
  });
  const onError = errorMiddleware(state.logger);
  router.use(onError);
  return (req, res) => {
    const handler = direct.get(req.method!)?.get(req.url!);
    if (handler === undefined) return void router(req as Request, res as Response, lastResort(state.logger, res));
    // A handler calls next only with an error (and one it throws is caught as the router would): it goes to the error middleware.
    const next = (err?: unknown): void => {
      const fail = lastResort(state.logger, res);
      try {
        onError(err, req as Request, res as Response, fail);
      } catch (thrown) {
        fail(thrown);
      }
    };
    try {
      handler(req as Request, res as Response, next);
    } catch (err) {
      next(err);
    }
  };
}
