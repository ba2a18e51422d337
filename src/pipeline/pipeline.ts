// A config's plugin chain, compiled: each phase's hooks in run order, each
// with its plugin's name (for the logs) and its slot (for its per-request
// state). Built once when the config loads.
import type { Logger } from 'pino';
import type { PluginDefinition, PluginEnv, PluginHooks, RequestContext } from '../contract/plugin';
import { checkHooks } from './hook-check';
import { outputCounter, type OutputCounter } from './output-metrics';

type Hooks = PluginHooks<unknown>;
export type Hook<K extends keyof Hooks> = { name: string; slot: number; run: NonNullable<Hooks[K]> };

export interface Pipeline {
  readonly names: readonly string[];
  readonly onRequest: ReadonlyArray<Hook<'onRequest'>>;
  /** How many of the first request hooks are the transform and validate stages' (the checks, before the core's step). */
  readonly checks: number;
  readonly outputRules: ReadonlyArray<Hook<'outputRules'>>;
  readonly onResponseHead: ReadonlyArray<Hook<'onResponseHead'>>;
  readonly onEvent: ReadonlyArray<Hook<'onEvent'>>;
  readonly onStreamEnd: ReadonlyArray<Hook<'onStreamEnd'>>;
  readonly onResponseBody: ReadonlyArray<Hook<'onResponseBody'>>;
  readonly onFinish: ReadonlyArray<Hook<'onFinish'>>;
  readonly close: ReadonlyArray<Hook<'close'>>;
  /** An MCP tool call's hooks (tool-runner.ts). */
  readonly onToolCall: ReadonlyArray<Hook<'onToolCall'>>;
  readonly toolResultRules: ReadonlyArray<Hook<'toolResultRules'>>;
  readonly onToolResult: ReadonlyArray<Hook<'onToolResult'>>;
  /** Per slot, the factory of that plugin's per-request state (undefined: no state). */
  readonly states: ReadonlyArray<(() => unknown) | undefined>;
  /** Where hook failures are logged, with the plugin's name and the request id. */
  readonly logger: Logger;
  /** Counts what output rules did, when a plugin gives any and there is a metrics registry. */
  readonly outputCounter?: OutputCounter;
}

const PHASE_LISTS = ['onRequest', 'outputRules', 'onResponseHead', 'onEvent', 'onStreamEnd', 'onResponseBody', 'onFinish', 'close', 'onToolCall', 'toolResultRules', 'onToolResult'] as const;

/**
 * A step of the core's own among the request hooks: it runs after every
 * transform- and validate-stage plugin and before the rest (admission takes
 * its slots there, so bad input spends nothing and budgets count only
 * admitted requests).
 */
export interface CoreStep {
  name: string;
  run(ctx: RequestContext): Promise<unknown> | undefined;
}

/** The stages whose plugins run before the core's step. */
const BEFORE_CORE: ReadonlySet<string> = new Set(['transform', 'validate']);

/** The env each plugin's create() gets: the config's, with what that plugin keeps for the process. */
export type ChainEnv = Omit<PluginEnv, 'kept'> & { keptOf(def: PluginDefinition): unknown };

export async function createPipeline(resolved: Array<{ def: PluginDefinition; settings: unknown }>, env: ChainEnv, core?: CoreStep): Promise<Pipeline> {
  const lists: Record<string, Array<{ name: string; slot: number; run: unknown }>> = Object.fromEntries(PHASE_LISTS.map((p) => [p, []]));
  const names: string[] = [];
  const states: Array<(() => unknown) | undefined> = [];
  const { keptOf, ...shared } = env;
  let checks: number | undefined;
  for (const { def, settings } of resolved) {
    if (!BEFORE_CORE.has(def.stage ?? 'admit')) checks ??= lists.onRequest.length;
    if (core !== undefined && !BEFORE_CORE.has(def.stage ?? 'admit')) {
      lists.onRequest.push(coreHook(core));
      core = undefined;
    }
    const hooks = checkHooks(await def.create(settings, { ...shared, kept: keptOf(def) }), def.name) as Hooks;
    const slot = names.length;
    names.push(def.name);
    states.push(hooks.state?.bind(hooks));
    for (const phase of PHASE_LISTS) {
      const fn = hooks[phase] as ((...args: unknown[]) => unknown) | undefined;
      if (fn) lists[phase].push({ name: def.name, slot, run: fn.bind(hooks) });
    }
  }
  checks ??= lists.onRequest.length;
  if (core !== undefined) lists.onRequest.push(coreHook(core));
  const counter = lists.outputRules.length + lists.toolResultRules.length > 0 && env.services.metrics !== undefined ? outputCounter(env.services.metrics) : undefined;
  return { ...(lists as unknown as Omit<Pipeline, 'names' | 'states' | 'logger' | 'checks'>), checks, names, states, logger: env.logger, outputCounter: counter };
}

/** The core's step as a request hook with no plugin state (slot -1). */
const coreHook = (core: CoreStep) => ({ name: core.name, slot: -1, run: (ctx: RequestContext) => core.run(ctx) });

/** Runs every plugin's close(); a failure is logged with the plugin's name, never thrown. */
export async function closePipeline(pipeline: Pipeline): Promise<void> {
  await Promise.all(pipeline.close.map(async ({ name, run }) => {
    try {
      await run();
    } catch (err) {
      pipeline.logger.error({ plugin: name, err: (err as Error)?.message }, 'plugin close failed');
    }
  }));
}
