// Reads the operator's config: file → YAML → ${ENV} → schema → cross-checks.
// Every problem comes back at once, each with its path, so one edit fixes all.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { configSchema, type ConfigView, type GatewayConfig } from './schema';
import { crossCheck, salvageConfig } from './cross-check';
import { fieldProblems } from './fields';
import { interpolateEnv } from './interpolate';
import { configIssues } from './issues';
import { portFromEnv, portProblem } from '../plumbing/env';

export class ConfigError extends Error {
  /** `message` defaults to "invalid config FILE:" and one line per problem. */
  constructor(readonly file: string, readonly problems: string[], message = `invalid config ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface LoadedConfig {
  config: GatewayConfig;
  /** Absolute path of the file, or '(inline)'; plugin modules resolve against its folder. */
  file: string;
}

export const defaultConfigPath = (env: NodeJS.ProcessEnv = process.env): string =>
  resolve(env.GATEWAY_CONFIG || 'config/gateway.yaml');

/**
 * More checks (plugin settings, say), reported with the rest. They run on a
 * config the schema rejected too, on what of it is valid (see ConfigView).
 */
export type ExtraCheck = (config: ConfigView, file: string) => string[];

/** Where the file name came from, so a missing file points at what to fix. */
function origin(file: string, env: NodeJS.ProcessEnv): string {
  if (env.GATEWAY_CONFIG && resolve(env.GATEWAY_CONFIG) === file) return ` (GATEWAY_CONFIG=${env.GATEWAY_CONFIG})`;
  if (file === defaultConfigPath({})) return ' (the default; set GATEWAY_CONFIG to the config file)';
  return '';
}

/** The file's text; a file that cannot be read is a ConfigError that says why. */
export function readConfigText(file: string, env: NodeJS.ProcessEnv = process.env): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? `it does not exist${origin(file, env)}` : code === 'EISDIR' ? 'it is a directory' : (err as Error).message;
    throw new ConfigError(file, [`cannot read the file: ${why}`], `cannot read the config file ${file}: ${why}`);
  }
}

export function loadConfigFile(file: string = defaultConfigPath(), env: NodeJS.ProcessEnv = process.env, extra?: ExtraCheck): LoadedConfig {
  return { config: parseConfigText(readConfigText(file, env), file, env, extra), file };
}

export function parseConfigText(text: string, file = '(inline)', env: NodeJS.ProcessEnv = process.env, extra?: ExtraCheck): GatewayConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (err) {
    const where = err instanceof YAMLParseError && err.linePos ? `line ${err.linePos[0].line}: ` : '';
    throw new ConfigError(file, [`${where}not valid YAML: ${(err as Error).message.split('\n')[0]}`]);
  }
  return validateConfig(raw, file, env, extra);
}

/** Schema, cross-references and the extra checks, all in one round: every problem at once. */
export function validateConfig(raw: unknown, file = '(inline)', env: NodeJS.ProcessEnv = process.env, extra?: ExtraCheck): GatewayConfig {
  const problems: string[] = [];
  const expanded = interpolateEnv(raw, env, problems) as Record<string, unknown>;
  // PORT is the operator's, not the file's: a bad one is blamed on PORT, and a good one wins.
  const badPort = portProblem(env.PORT);
  if (badPort !== undefined) problems.push(badPort.replace(/^PORT /, 'PORT (environment): '));
  const port = portFromEnv(env);
  if (port !== undefined && expanded !== null && typeof expanded === 'object') {
    const server = (expanded.server ?? {}) as Record<string, unknown>;
    expanded.server = { ...server, port };
  }
  const parsed = configSchema.safeParse(expanded);
  const schemaPaths: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      for (const [path, problem] of configIssues(issue)) {
        schemaPaths.push(path);
        problems.push(`${path}: ${problem}`);
      }
    }
  }
  // The rest runs on what is valid, so one round lists everything; a path the schema already named keeps the schema's word.
  const view: ConfigView = parsed.success ? parsed.data : salvageConfig(expanded);
  const named = (problem: string) => schemaPaths.some((p) => problem.startsWith(`${p}:`) || problem.startsWith(`${p}.`) || problem.startsWith(`${p}[`));
  // The extra check (the plugin registry's) knows the fields plugins add; with none, every field beyond the core's is unknown.
  problems.push(...[...crossCheck(view), ...(extra ? extra(view, file) : fieldProblems(view, []))].filter((p) => !named(p)));
  if (problems.length > 0 || !parsed.success) throw new ConfigError(file, problems);
  return parsed.data;
}
