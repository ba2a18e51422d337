#!/usr/bin/env node
// The `sluice` command: serve, keys create|hash, config check.
import { parseArgs } from 'node:util';
import { ConfigError, defaultConfigPath, loadConfigFile } from '../config/load';
import type { GatewayConfig } from '../config/schema';
import { PluginRegistry } from '../pipeline/registry';
import { checkRuntimeConfig } from '../runtime';
import { ALWAYS_ON } from '../gateway';
import { builtinPlugins } from '../../plugins';
import { createKey, hashInput } from './keys';

const USAGE = `usage:
  sluice serve                      run the gateway (GATEWAY_CONFIG or config/gateway.yaml)
  sluice keys create --id NAME [--org ORG] [--models GLOB,...]
                                    print a new key once, and its config entry
  sluice keys hash                  read a key on stdin, print its SHA-256 digest
  sluice config check [FILE]        validate a config without starting anything
`;

function readStdin(): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (c: string) => { text += c; });
    process.stdin.on('end', () => resolve(text));
  });
}

/** Every problem of a config file, schema and plugin settings alike; [] when it is valid. */
export function checkConfigFile(file: string): string[] {
  const deps = { registry: new PluginRegistry(builtinPlugins), alwaysOn: ALWAYS_ON };
  const pluginProblems = (config: GatewayConfig): string[] => {
    try {
      checkRuntimeConfig({ config, file }, deps);
      return [];
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
  };
  try {
    loadConfigFile(file, process.env, pluginProblems);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

async function main(argv: string[]): Promise<number> {
  const [group, verb, ...rest] = argv;
  if (group === 'serve') {
    await import('../server').then((m) => m.main());
    return -1; // keeps running
  }
  if (group === 'keys' && verb === 'create') {
    const { values } = parseArgs({ args: rest, options: { id: { type: 'string' }, org: { type: 'string' }, models: { type: 'string' } } });
    if (!values.id) throw new Error('--id NAME is required');
    const { key, entry } = createKey({ id: values.id, org: values.org, models: values.models?.split(',').map((m) => m.trim()).filter(Boolean) });
    process.stdout.write(`key (shown once, store it now): ${key}\n\nadd under keys: in the config\n${entry}\n`);
    return 0;
  }
  if (group === 'keys' && verb === 'hash') {
    process.stdout.write(`${hashInput(await readStdin())}\n`);
    return 0;
  }
  if (group === 'config' && verb === 'check') {
    const file = rest[0] ?? defaultConfigPath();
    const problems = checkConfigFile(file);
    if (problems.length === 0) {
      process.stdout.write(`${file}: ok\n`);
      return 0;
    }
    process.stdout.write(`${file}: ${problems.length} problem(s)\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
    return 1;
  }
  process.stderr.write(USAGE);
  return 2;
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { if (code >= 0) process.exitCode = code; }, (err: Error) => {
    process.stderr.write(`sluice: ${err.message}\n`);
    process.exitCode = 2;
  });
}
