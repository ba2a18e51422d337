// Reads the operator's config: file → YAML → ${ENV} → schema → cross-checks.
// Every problem comes back at once, each with its path, so one edit fixes all.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { configSchema, crossCheck, type GatewayConfig } from './schema';
import { interpolateEnv } from './interpolate';
import { formatPath } from './issues';

export class ConfigError extends Error {
  constructor(readonly file: string, readonly problems: string[]) {
    super(`invalid config ${file}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface LoadedConfig {
  config: GatewayConfig;
  /** Absolute path of the file, or '(inline)'; plugin modules resolve against its folder. */
  file: string;
}

export const defaultConfigPath = (env: NodeJS.ProcessEnv = process.env): string =>
  resolve(env.GATEWAY_CONFIG ?? 'config/gateway.yaml');

/** More checks on a schema-valid config (plugin settings, say), reported with the rest. */
export type ExtraCheck = (config: GatewayConfig) => string[];

export function loadConfigFile(file: string = defaultConfigPath(), env: NodeJS.ProcessEnv = process.env, extra?: ExtraCheck): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [`cannot read the file: ${(err as Error).message}`]);
  }
  return { config: parseConfigText(text, file, env, extra), file };
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

export function validateConfig(raw: unknown, file = '(inline)', env: NodeJS.ProcessEnv = process.env, extra?: ExtraCheck): GatewayConfig {
  const problems: string[] = [];
  const expanded = interpolateEnv(raw, env, problems) as Record<string, unknown>;
  if (env.PORT !== undefined && env.PORT !== '' && expanded && typeof expanded === 'object') {
    const server = (expanded.server ?? {}) as Record<string, unknown>;
    expanded.server = { ...server, port: env.PORT };
  }
  const parsed = configSchema.safeParse(expanded);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = issue.code === 'unrecognized_keys' ? formatPath([...issue.path, issue.keys[0]]) : formatPath(issue.path);
      problems.push(`${path || '(root)'}: ${issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message}`);
    }
    throw new ConfigError(file, problems);
  }
  problems.push(...crossCheck(parsed.data));
  if (extra) problems.push(...extra(parsed.data));
  if (problems.length > 0) throw new ConfigError(file, problems);
  return parsed.data;
}
