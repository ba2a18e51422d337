// Runs a pipeline's hooks for one request, keeping the contract's promises:
// once the client has left no further onRequest starts; onFinish runs once,
// after every onRequest that started has settled (the caller waits on
// `ctx.requestHooks`); synchronous hooks stay synchronous (no microtask per
// plugin); a hook that fails is logged with its plugin's name and the
// request id, and never breaks the response it observes.
import type { Logger } from 'pino';
import { isGatewayError } from '../contract/errors';
import type { Outcome, OutputRules, RequestContext, ResponseHead, StreamEvent } from '../contract/plugin';
import type { Hook, Pipeline } from './pipeline';
import type { OutputPolicy } from './output-policy';

type RequestHook = Hook<'onRequest'>;

/** The core's context carries each plugin's per-request state, by slot; plugins see only their own. */
type Stateful = RequestContext & { pluginState?: unknown[] };

function stateFor(pipeline: Pipeline, ctx: RequestContext, slot: number): unknown {
  const make = pipeline.states[slot];
  if (make === undefined) return undefined;
  const all = ((ctx as Stateful).pluginState ??= []);
  return all[slot] ?? (all[slot] = make());
}

/** Undefined when every hook ran synchronously; else the promise of the rest. */
export function runRequestHooks(pipeline: Pipeline, ctx: RequestContext & { closed: boolean }, end = pipeline.onRequest.length): Promise<void> | undefined {
  const hooks = pipeline.onRequest;
  for (let i = 0; i < end; i++) {
    if (ctx.closed) return undefined;
    const pending = call(pipeline, hooks[i], ctx);
    if (pending !== undefined) return finishAsync(pipeline, ctx, pending, i + 1, end);
  }
  return undefined;
}

/**
 * The request hooks before the core's step (the transform and validate
 * stages: redaction, the content filter), not admission nor budgets: for a
 * request that a backend reads but that is not usage (count_tokens).
 */
export function runCheckHooks(pipeline: Pipeline, ctx: RequestContext & { closed: boolean }): Promise<void> | undefined {
  return runRequestHooks(pipeline, ctx, pipeline.checks);
}

async function finishAsync(pipeline: Pipeline, ctx: RequestContext & { closed: boolean }, pending: Promise<void>, from: number, end: number): Promise<void> {
  await pending;
  for (let i = from; i < end; i++) {
    if (ctx.closed) return; // the client left while a hook was waiting
    const next = call(pipeline, pipeline.onRequest[i], ctx);
    if (next !== undefined) await next;
  }
}

/** A refusal (GatewayError) passes as it is; anything else is a plugin bug, logged with the plugin's name. */
function failed(pipeline: Pipeline, hook: RequestHook, ctx: RequestContext, err: unknown): never {
  if (!isGatewayError(err)) logHookFailure(pipeline.logger, ctx, hook.name, 'onRequest', err);
  throw err;
}

/**
 * An async hook's outcome, awaited rather than handed a closure: a closure
 * made per request and given to a promise kept the request's objects alive
 * through minor GCs (measured: 3 KB promoted per request for one async hook).
 */
async function settled(pipeline: Pipeline, hook: RequestHook, ctx: RequestContext, pending: PromiseLike<void>): Promise<void> {
  try {
    await pending;
  } catch (err) {
    failed(pipeline, hook, ctx, err);
  }
}

function call(pipeline: Pipeline, hook: RequestHook, ctx: RequestContext): Promise<void> | undefined {
  try {
    const pending = hook.run(ctx, stateFor(pipeline, ctx, hook.slot));
    return pending === undefined || pending === null ? undefined : settled(pipeline, hook, ctx, pending);
  } catch (err) {
    return failed(pipeline, hook, ctx, err);
  }
}

/** A failing head hook is logged and skipped: it must not break the response it observes. */
export function runHeadHooks(pipeline: Pipeline, ctx: RequestContext, head: ResponseHead, logger: Logger): void {
  for (const hook of pipeline.onResponseHead) {
    try {
      hook.run(ctx, head, stateFor(pipeline, ctx, hook.slot));
    } catch (err) {
      logHookFailure(logger, ctx, hook.name, 'onResponseHead', err);
    }
  }
}

/**
 * The output rules the plugins give this request's answer, in chain order;
 * undefined when none does (the answer is then not looked at). A failing
 * hook is logged and gives none.
 */
export function runOutputRulesHooks(pipeline: Pipeline, ctx: RequestContext): OutputPolicy | undefined {
  let rules: Array<{ plugin: string; rules: OutputRules }> | undefined;
  for (const hook of pipeline.outputRules) {
    try {
      const given = hook.run(ctx, stateFor(pipeline, ctx, hook.slot));
      if (given !== undefined && given !== null) (rules ??= []).push({ plugin: hook.name, rules: given });
    } catch (err) {
      logHookFailure(pipeline.logger, ctx, hook.name, 'outputRules', err);
    }
  }
  return rules === undefined ? undefined : { rules, counter: pipeline.outputCounter };
}

/** The event every onEvent hook sees: the data, and its JSON parsed at most once for all of them. */
class SharedEvent implements StreamEvent {
  private parsed?: { value: unknown };
  constructor(readonly data: string) {}
  get json(): unknown {
    if (this.parsed === undefined) {
      let value: unknown;
      try { value = JSON.parse(this.data); } catch { value = undefined; }
      this.parsed = { value };
    }
    return this.parsed.value;
  }
}

/** Passes one event's data through every onEvent hook; null means dropped. A failing hook keeps the event as it was. */
export function runEventHooks(pipeline: Pipeline, ctx: RequestContext, data: string): string | null {
  let event = new SharedEvent(data);
  for (const hook of pipeline.onEvent) {
    let verdict: unknown;
    try {
      verdict = hook.run(ctx, event, stateFor(pipeline, ctx, hook.slot));
    } catch (err) {
      logHookFailure(pipeline.logger, ctx, hook.name, 'onEvent', err);
      continue;
    }
    if (verdict === null) return null;
    if (verdict === undefined) continue;
    if (typeof (verdict as { then?: unknown }).then === 'function') {
      logHookFailure(pipeline.logger, ctx, hook.name, 'onEvent', new Error('onEvent must decide synchronously; it returned a promise, and the event was kept'));
    } else if (typeof verdict === 'string') {
      event = new SharedEvent(verdict);
    } else if (typeof verdict === 'object') {
      event = new SharedEvent(JSON.stringify(verdict));
    }
  }
  return event.data;
}

/** The last events plugins add before [DONE], as data strings. */
export function runStreamEndHooks(pipeline: Pipeline, ctx: RequestContext): string[] {
  const out: string[] = [];
  for (const hook of pipeline.onStreamEnd) {
    try {
      const extra = hook.run(ctx, stateFor(pipeline, ctx, hook.slot));
      if (typeof extra === 'string') out.push(extra);
      else if (extra !== undefined && extra !== null) out.push(JSON.stringify(extra));
    } catch (err) {
      logHookFailure(pipeline.logger, ctx, hook.name, 'onStreamEnd', err);
    }
  }
  return out;
}

/** A JSON answer through every onResponseBody hook; each may replace it. A failing hook leaves it as it was. */
export function runResponseBodyHooks(pipeline: Pipeline, ctx: RequestContext, body: Record<string, unknown>): Record<string, unknown> {
  let current = body;
  for (const hook of pipeline.onResponseBody) {
    try {
      const next = hook.run(ctx, current, stateFor(pipeline, ctx, hook.slot));
      if (next !== undefined && next !== null && typeof next === 'object') current = next;
    } catch (err) {
      logHookFailure(pipeline.logger, ctx, hook.name, 'onResponseBody', err);
    }
  }
  return current;
}

export function runFinishHooks(pipeline: Pipeline, ctx: RequestContext, outcome: Outcome, logger: Logger): void {
  for (const hook of pipeline.onFinish) {
    try {
      const pending = hook.run(ctx, outcome, stateFor(pipeline, ctx, hook.slot));
      if (pending !== undefined) Promise.resolve(pending).catch((err: unknown) => logHookFailure(logger, ctx, hook.name, 'onFinish', err));
    } catch (err) {
      logHookFailure(logger, ctx, hook.name, 'onFinish', err);
    }
  }
}

export function logHookFailure(logger: Logger, ctx: RequestContext, plugin: string, hook: string, err: unknown): void {
  logger.error({ requestId: ctx.id, plugin, hook, err: (err as Error)?.message }, 'plugin hook failed');
}
