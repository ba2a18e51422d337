// Turns the `plugins:` list into a pipeline. Definitions are checked when they
// are registered (closed list of phases), settings when the config loads, so
// nothing about a plugin is decided while a request is in flight.
import { isAbsolute, resolve } from 'node:path';
import { formatPath } from '../config/issues';
import type { PluginEntry } from '../config/schema';
import { PHASES, type PluginDefinition, type PluginEnv, type PluginHooks } from './contract';

export interface Pipeline {
  readonly names: readonly string[];
  readonly onRequest: ReadonlyArray<{ name: string; run: NonNullable<PluginHooks['onRequest']> }>;
  readonly onResponseHead: ReadonlyArray<NonNullable<PluginHooks['onResponseHead']>>;
  readonly onEvent: ReadonlyArray<NonNullable<PluginHooks['onEvent']>>;
  readonly onFinish: ReadonlyArray<{ name: string; run: NonNullable<PluginHooks['onFinish']> }>;
  readonly close: ReadonlyArray<NonNullable<PluginHooks['close']>>;
}

export function checkDefinition(def: unknown, where: string): PluginDefinition {
  const d = def as PluginDefinition | undefined;
  if (!d || typeof d.name !== 'string' || typeof d.create !== 'function' || typeof d.schema?.safeParse !== 'function') {
    throw new Error(`${where}: not a plugin definition (needs name, schema and create)`);
  }
  return d;
}

export function checkHooks(hooks: PluginHooks, name: string): PluginHooks {
  for (const key of Object.keys(hooks)) {
    if (!(PHASES as readonly string[]).includes(key)) throw new Error(`plugin "${name}" returned an unknown hook "${key}" (known: ${PHASES.join(', ')})`);
    if (typeof (hooks as Record<string, unknown>)[key] !== 'function') throw new Error(`plugin "${name}": hook "${key}" is not a function`);
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

  /** Resolves and validates every entry; problems are collected with their paths. */
  resolveEntries(entries: readonly PluginEntry[], configDir: string, problems: string[]): Array<{ def: PluginDefinition; settings: unknown }> {
    const out: Array<{ def: PluginDefinition; settings: unknown }> = [];
    entries.forEach((entry, i) => {
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
  const pipeline = { names: [], onRequest: [], onResponseHead: [], onEvent: [], onFinish: [], close: [] } as {
    -readonly [K in keyof Pipeline]: Pipeline[K] extends ReadonlyArray<infer T> ? T[] : never;
  };
  for (const { def, settings } of resolved) {
    const hooks = checkHooks(await def.create(settings, env), def.name);
    pipeline.names.push(def.name);
    if (hooks.onRequest) pipeline.onRequest.push({ name: def.name, run: hooks.onRequest.bind(hooks) });
    if (hooks.onResponseHead) pipeline.onResponseHead.push(hooks.onResponseHead.bind(hooks));
    if (hooks.onEvent) pipeline.onEvent.push(hooks.onEvent.bind(hooks));
    if (hooks.onFinish) pipeline.onFinish.push({ name: def.name, run: hooks.onFinish.bind(hooks) });
    if (hooks.close) pipeline.close.push(hooks.close.bind(hooks));
  }
  return pipeline;
}
