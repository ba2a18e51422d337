// Runs a pipeline's hooks for one request. Synchronous hooks stay synchronous
// (no extra microtask per plugin); a finish hook's failure is logged, never
// allowed to break the response or the other plugins.
import type { Logger } from 'pino';
import type { Outcome, RequestContext, ResponseHead } from './contract';
import type { Pipeline } from './registry';

export async function runRequestHooks(pipeline: Pipeline, ctx: RequestContext): Promise<void> {
  for (const hook of pipeline.onRequest) {
    const pending = hook.run(ctx);
    if (pending !== undefined) await pending;
  }
}

/** A failing head hook is logged and skipped: it must not break the response it observes. */
export function runHeadHooks(pipeline: Pipeline, ctx: RequestContext, head: ResponseHead, logger: Logger): void {
  for (const hook of pipeline.onResponseHead) {
    try {
      hook(ctx, head);
    } catch (err) {
      logger.error({ requestId: ctx.id, err: (err as Error)?.message }, 'response head hook failed');
    }
  }
}

/** Passes one event's data through every onEvent hook; null means dropped. */
export function runEventHooks(pipeline: Pipeline, ctx: RequestContext, data: string): string | null {
  let current = data;
  for (const hook of pipeline.onEvent) {
    const next = hook(ctx, current);
    if (next === null) return null;
    if (next !== undefined) current = next;
  }
  return current;
}

export function runFinishHooks(pipeline: Pipeline, ctx: RequestContext, outcome: Outcome, logger: Logger): void {
  for (const hook of pipeline.onFinish) {
    try {
      const pending = hook.run(ctx, outcome);
      if (pending !== undefined) pending.catch((err: unknown) => logHookFailure(logger, ctx, hook.name, err));
    } catch (err) {
      logHookFailure(logger, ctx, hook.name, err);
    }
  }
}

function logHookFailure(logger: Logger, ctx: RequestContext, plugin: string, err: unknown): void {
  logger.error({ requestId: ctx.id, plugin, err: (err as Error)?.message }, 'finish hook failed');
}
