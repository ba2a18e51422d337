// Knows the plugins (built in, and third-party ones named by path) and turns
// the config's `plugins:` list into checked definitions and settings, in the
// order they run: by stage, the config's order breaking ties within a stage,
// with required plugins the config leaves out added (default settings).
// Nothing about a plugin is decided while a request is in flight.
import { isAbsolute, resolve } from 'node:path';
import { configIssues } from '../config/issues';
import type { ConfigView, PluginEntry } from '../config/schema';
import { registerReasons } from '../contract/errors';
import { STAGES, type PluginDefinition } from '../contract/plugin';
import { fieldProblems } from '../config/fields';

export function checkDefinition(def: unknown, where: string): PluginDefinition {
  const d = def as PluginDefinition | undefined;
  if (!d || typeof d.name !== 'string' || typeof d.create !== 'function' || typeof d.schema?.safeParse !== 'function') {
    throw new Error(`${where}: not a plugin definition (needs name, schema and create)`);
  }
  return d;
}

export class PluginRegistry {
  private readonly known = new Map<string, PluginDefinition>();

  constructor(definitions: readonly PluginDefinition[] = []) {
    definitions.forEach((d) => this.register(d));
  }

  register(definition: PluginDefinition): void {
    const def = checkDefinition(definition, `plugin ${String((definition as { name?: unknown })?.name)}`);
    if (this.known.has(def.name)) throw new Error(`plugin "${def.name}" is registered twice`);
    if (def.reasons !== undefined) registerReasons(def.reasons, def.name);
    this.known.set(def.name, def);
  }

  /** The registered definitions (the built-in ones first). */
  definitions(): PluginDefinition[] {
    return [...this.known.values()];
  }

  /**
   * The fields plugins add to the config, and every registered plugin's own
   * cross-checks of it, each told whether the config runs it.
   */
  check(config: ConfigView, configDir?: string): string[] {
    const names = config.plugins === undefined ? undefined : new Set(config.plugins.map((p) => p?.name));
    const modules = configDir === undefined ? [] : moduleDefinitions(config, configDir);
    const active = (def: PluginDefinition): boolean => names === undefined || modules.includes(def) || names.has(def.name) || def.required === true;
    const defs = [...this.known.values()];
    const fields = fieldProblems(config, [...defs, ...modules].map((def) => ({ name: def.name, fields: def.fields, active: active(def) })));
    if (config.plugins === undefined) return fields; // the list itself is invalid: which plugins run is unknown
    return [...fields, ...defs.flatMap((def) => def.check?.(config, active(def)) ?? [])];
  }


  /**
   * The chain a config runs, in order: required plugins it leaves out (with
   * their defaults), then its entries; sorted by stage, stable, so the
   * config's order only breaks ties within a stage.
   */
  resolveChain(entries: ReadonlyArray<PluginEntry | undefined>, configDir: string, problems: string[]): Array<{ def: PluginDefinition; settings: unknown }> {
    const listed = new Set(entries.map((e) => e?.name));
    const missing = [...this.known.values()].filter((d) => d.required && !listed.has(d.name)).map((d): PluginEntry => ({ name: d.name }));
    const chain = [...this.resolveEntries(missing, configDir, problems), ...this.resolveEntries(entries, configDir, problems)];
    const rank = (def: PluginDefinition): number => STAGES.indexOf(def.stage ?? 'admit');
    return chain.map((c, i) => ({ c, i })).sort((a, b) => rank(a.c.def) - rank(b.c.def) || a.i - b.i).map(({ c }) => c);
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
        for (const issue of parsed.error.issues) for (const [path, problem] of configIssues(issue, ['plugins', i])) problems.push(`${path}: ${problem}`);
        return;
      }
      out.push({ def, settings: parsed.data });
    });
    return out;
  }
}

/** The definitions of the plugins a config loads by module path, as far as they load (their problems are reported with the chain). */
function moduleDefinitions(config: ConfigView, configDir: string): PluginDefinition[] {
  return (config.plugins ?? []).flatMap((entry) => {
    if (entry?.module === undefined) return [];
    try { return [loadModule(entry.module, configDir, '')]; } catch { return []; }
  });
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
  const def = checkDefinition(mod.plugin ?? mod.default ?? mod, where);
  if (def.reasons !== undefined) registerReasons(def.reasons, def.name);
  return def;
}

