// Runs a pipeline's hooks for one request, keeping the contract's promises:
// once the client has left no further onRequest starts; onFinish runs once,
// after every onRequest that started has settled (the caller waits on
// `ctx.requestHooks`); synchronous hooks stay synchronous (no microtask per
// plugin); a hook that fails is logged with its plugin's name and the
// request id, and never breaks the response it observes.
import type { Logger } from 'pino';
import { isGatewayError } from '../errors';
import type { Outcome, RequestContext, ResponseHead } from './contract';
import type { Pipeline } from './registry';

type RequestHook = Pipeline['onRequest'][number];

/** Undefined when every hook ran synchronously; else the promise of the rest. */
export function runRequestHooks(pipeline: Pipeline, ctx: RequestContext & { closed: boolean }): Promise<void> | undefined {
  const hooks = pipeline.onRequest;
  for (let i = 0; i < hooks.length; i++) {
    if (ctx.closed) return undefined;
    const pending = call(pipeline, hooks[i], ctx);
    if (pending !== undefined) return finishAsync(pipeline, ctx, pending, i + 1);
  }
  return undefined;
}

async function finishAsync(pipeline: Pipeline, ctx: RequestContext & { closed: boolean }, pending: Promise<void>, from: number): Promise<void> {
  await pending;
  for (let i = from; i < pipeline.onRequest.length; i++) {
    if (ctx.closed) return; // the client left while a hook was waiting
    const next = call(pipeline, pipeline.onRequest[i], ctx);
    if (next !== undefined) await next;
  }
}

/** A refusal (GatewayError) passes as it is; anything else is a plugin bug, logged with the plugin's name. */
function call(pipeline: Pipeline, hook: RequestHook, ctx: RequestContext): Promise<void> | undefined {
  const failed = (err: unknown): never => {
    if (!isGatewayError(err)) logHookFailure(pipeline.logger, ctx, hook.name, 'onRequest', err);
    throw err;
  };
  try {
    const pending = hook.run(ctx);
    return pending === undefined || pending === null ? undefined : Promise.resolve(pending).catch(failed);
  } catch (err) {
    return failed(err);
  }
}

/** A failing head hook is logged and skipped: it must not break the response it observes. */
export function runHeadHooks(pipeline: Pipeline, ctx: RequestContext, head: ResponseHead, logger: Logger): void {
  for (const hook of pipeline.onResponseHead) {
    try {
      hook.run(ctx, head);
    } catch (err) {
      logHookFailure(logger, ctx, hook.name, 'onResponseHead', err);
    }
  }
}

/** Passes one event's data through every onEvent hook; null means dropped. A failing hook keeps the event as it was. */
export function runEventHooks(pipeline: Pipeline, ctx: RequestContext, data: string): string | null {
  let current = data;
  for (const hook of pipeline.onEvent) {
    let next: unknown;
    try {
      next = hook.run(ctx, current);
    } catch (err) {
      logHookFailure(pipeline.logger, ctx, hook.name, 'onEvent', err);
      continue;
    }
    if (next === null) return null;
    if (typeof next === 'string') current = next;
    else if (next !== undefined) logHookFailure(pipeline.logger, ctx, hook.name, 'onEvent', new Error('onEvent must return a string, null or undefined synchronously; the event was kept'));
  }
  return current;
}

export function runFinishHooks(pipeline: Pipeline, ctx: RequestContext, outcome: Outcome, logger: Logger): void {
  for (const hook of pipeline.onFinish) {
    try {
      const pending = hook.run(ctx, outcome);
      if (pending !== undefined) Promise.resolve(pending).catch((err: unknown) => logHookFailure(logger, ctx, hook.name, 'onFinish', err));
    } catch (err) {
      logHookFailure(logger, ctx, hook.name, 'onFinish', err);
    }
  }
}

export function logHookFailure(logger: Logger, ctx: RequestContext, plugin: string, hook: string, err: unknown): void {
  logger.error({ requestId: ctx.id, plugin, hook, err: (err as Error)?.message }, 'plugin hook failed');
}
