// Builds the Express app from the gateway's state; no listening here, so tests
// mount it on their own sockets. A request takes the runtime current at its
// arrival and keeps it to the end.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { Endpoint, Version } from './config/schema';
import { GatewayError } from './errors';
import { Context, requestIdOf } from './pipeline/context';
import { runFinishHooks } from './pipeline/runner';
import type { Runtime } from './runtime';
import { chatCompletions, imageGenerations, listModels, parseJsonBody, requireKey, type ApiRequest } from './api/handlers';
import { errorMiddleware } from './api/errors';
import { logAccess } from './api/access-log';

export interface GatewayState {
  runtime: Runtime;
  /** False while starting and once draining: /readyz answers 503. */
  ready: boolean;
  logger: Logger;
  /** API requests in flight, so a drain can end the streams still open at its deadline. */
  active: Set<Context>;
}

const VERSIONS: readonly Version[] = ['v1', 'v2'];

function begin(state: GatewayState, version: Version, endpoint: Endpoint | 'models') {
  return (req: Request, res: Response, next: NextFunction): void => {
    const runtime = state.runtime;
    const ctx = new Context(version, endpoint, req, res);
    (req as ApiRequest).runtime = runtime;
    if (!state.ready) res.setHeader('connection', 'close');
    runtime.hold();
    state.active.add(ctx);
    res.once('close', () => {
      state.active.delete(ctx);
      const outcome = ctx.finish();
      if (outcome !== undefined) {
        runFinishHooks(runtime.pipeline, ctx, outcome, state.logger);
        logAccess(state.logger, ctx, outcome);
      }
      runtime.release();
    });
    next();
  };
}

function methodNotAllowed(allow: string) {
  return (_req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('allow', allow);
    next(new GatewayError('method_not_allowed', `This path accepts ${allow} only.`));
  };
}

export function createApp(state: GatewayState): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((req, res, next) => { requestIdOf(req, res); next(); }); // every response carries one

  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', (_req, res) => void res.status(state.ready ? 200 : 503).json({ status: state.ready ? 'ready' : 'not ready' }));

  for (const v of VERSIONS) {
    app.post(`/${v}/chat/completions`, begin(state, v, 'chat'), requireKey, parseJsonBody, chatCompletions);
    app.post(`/${v}/images/generations`, begin(state, v, 'images'), requireKey, parseJsonBody, imageGenerations);
    app.get(`/${v}/models`, begin(state, v, 'models'), requireKey, listModels);
    app.all(`/${v}/chat/completions`, methodNotAllowed('POST'));
    app.all(`/${v}/images/generations`, methodNotAllowed('POST'));
    app.all(`/${v}/models`, methodNotAllowed('GET'));
  }

  app.use((req, _res, next) => next(new GatewayError('not_found', `No such endpoint: ${req.method} ${req.path.slice(0, 200)}. See the README for the endpoints this gateway serves.`)));
  app.use(errorMiddleware(state.logger));
  return app;
}
