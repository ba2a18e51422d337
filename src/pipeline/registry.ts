// Turns the `plugins:` list into a pipeline. Definitions are checked when they
// are registered (closed list of phases), settings when the config loads, so
// nothing about a plugin is decided while a request is in flight.
import { isAbsolute, resolve } from 'node:path';
import { formatPath } from '../config/issues';
import type { PluginEntry } from '../config/schema';
import type { Logger } from 'pino';
import { PHASES, type PluginDefinition, type PluginEnv, type PluginHooks } from './contract';

type Named<T> = { name: string; run: T };

export interface Pipeline {
  readonly names: readonly string[];
  readonly onRequest: ReadonlyArray<Named<NonNullable<PluginHooks['onRequest']>>>;
  readonly onResponseHead: ReadonlyArray<Named<NonNullable<PluginHooks['onResponseHead']>>>;
  readonly onEvent: ReadonlyArray<Named<NonNullable<PluginHooks['onEvent']>>>;
  readonly onFinish: ReadonlyArray<Named<NonNullable<PluginHooks['onFinish']>>>;
  readonly close: ReadonlyArray<Named<NonNullable<PluginHooks['close']>>>;
  /** Where hook failures are logged, with the plugin's name and the request id. */
  readonly logger: Logger;
}

export function checkDefinition(def: unknown, where: string): PluginDefinition {
  const d = def as PluginDefinition | undefined;
  if (!d || typeof d.name !== 'string' || typeof d.create !== 'function' || typeof d.schema?.safeParse !== 'function') {
    throw new Error(`${where}: not a plugin definition (needs name, schema and create)`);
  }
  return d;
}

/** Hooks that run inside a write to the client: a promise there would be sent as text, or lost. */
const SYNC_ONLY: readonly string[] = ['onEvent', 'onResponseHead'];
const LOOKS_LIKE_A_HOOK = /^on[A-Z]/;

/** Every method name an object answers to: its own keys and its class's methods (not Object's). */
function methodNames(hooks: object): string[] {
  const names = new Set(Object.keys(hooks));
  for (let proto = Object.getPrototypeOf(hooks); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) if (key !== 'constructor') names.add(key);
  }
  return [...names];
}

/**
 * Checks a plugin's hooks when it loads, as Fastify checks addHook: every own
 * key, and every class method named like a hook (onSomething), must be a known
 * phase and a function; onEvent and onResponseHead must be synchronous.
 */
export function checkHooks(hooks: PluginHooks, name: string): PluginHooks {
  if (hooks === null || typeof hooks !== 'object') throw new Error(`plugin "${name}": create() must return an object of hooks`);
  const own = new Set(Object.keys(hooks));
  for (const key of methodNames(hooks)) {
    const known = (PHASES as readonly string[]).includes(key);
    if (!known && (own.has(key) || LOOKS_LIKE_A_HOOK.test(key))) {
      throw new Error(`plugin "${name}" has an unknown hook "${key}" (known: ${PHASES.join(', ')})`);
    }
    if (!known) continue;
    const fn = (hooks as Record<string, unknown>)[key];
    if (typeof fn !== 'function') throw new Error(`plugin "${name}": hook "${key}" is not a function`);
    if (SYNC_ONLY.includes(key) && fn.constructor?.name === 'AsyncFunction') {
      throw new Error(`plugin "${name}": hook "${key}" is async, but it must be synchronous: it runs while the response is being written, so a promise would reach the client as text. Do the async work in onRequest or onFinish.`);
    }
  }
  return hooks;
}

export class PluginRegistry {
  private readonly known = new Map<string, PluginDefinition>();

  constructor(definitions: readonly PluginDefinition[] = []) {
    definitions.forEach((d) => this.register(d));
  }

  register(definition: PluginDefinition): void {
    const def = checkDefinition(definition, `plugin ${String((definition as { name?: unknown })?.name)}`);
    if (this.known.has(def.name)) throw new Error(`plugin "${def.name}" is registered twice`);
    this.known.set(def.name, def);
  }

  /**
   * Resolves and validates every entry; problems are collected with their paths.
   * An undefined entry (one the config schema rejected) is skipped, keeping the others' indices.
   */
  resolveEntries(entries: ReadonlyArray<PluginEntry | undefined>, configDir: string, problems: string[]): Array<{ def: PluginDefinition; settings: unknown }> {
    const out: Array<{ def: PluginDefinition; settings: unknown }> = [];
    entries.forEach((entry, i) => {
      if (entry === undefined) return;
      const { name, module, ...rest } = entry;
      let def: PluginDefinition | undefined;
      try {
        def = module !== undefined ? loadModule(module, configDir, `plugins[${i}].module`) : this.known.get(name);
      } catch (err) {
        problems.push((err as Error).message);
        return;
      }
      if (def === undefined) {
        problems.push(`plugins[${i}].name: unknown plugin "${name}" (built in: ${[...this.known.keys()].join(', ')}; or give module: ./path/to/plugin.js)`);
        return;
      }
      const parsed = def.schema.safeParse(rest);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]] : issue.path;
          problems.push(`${formatPath(['plugins', i, ...path])}: ${issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message}`);
        }
        return;
      }
      out.push({ def, settings: parsed.data });
    });
    return out;
  }
}

function loadModule(path: string, configDir: string, where: string): PluginDefinition {
  const full = isAbsolute(path) ? path : resolve(configDir, path);
  let mod: Record<string, unknown>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    mod = require(full) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`${where}: cannot load "${path}": ${(err as Error).message.split('\n')[0]}`);
  }
  return checkDefinition(mod.plugin ?? mod.default ?? mod, where);
}

export async function createPipeline(resolved: Array<{ def: PluginDefinition; settings: unknown }>, env: PluginEnv): Promise<Pipeline> {
  const pipeline = { names: [], onRequest: [], onResponseHead: [], onEvent: [], onFinish: [], close: [], logger: env.logger } as unknown as {
    -readonly [K in Exclude<keyof Pipeline, 'logger'>]: Pipeline[K] extends ReadonlyArray<infer T> ? T[] : never;
  } & { logger: Logger };
  for (const { def, settings } of resolved) {
    const hooks = checkHooks(await def.create(settings, env), def.name);
    const name = def.name;
    pipeline.names.push(name);
    if (hooks.onRequest) pipeline.onRequest.push({ name, run: hooks.onRequest.bind(hooks) });
    if (hooks.onResponseHead) pipeline.onResponseHead.push({ name, run: hooks.onResponseHead.bind(hooks) });
    if (hooks.onEvent) pipeline.onEvent.push({ name, run: hooks.onEvent.bind(hooks) });
    if (hooks.onFinish) pipeline.onFinish.push({ name, run: hooks.onFinish.bind(hooks) });
    if (hooks.close) pipeline.close.push({ name, run: hooks.close.bind(hooks) });
  }
  return pipeline;
}

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
