#!/usr/bin/env node
// The `sluice` command: serve, keys create|hash (and the admin API's verbs:
// create|list|show|update|revoke|rotate), teams create|list|show|update|delete, spend, usage export, config check,
// help, --version.
// bin/sluice.js (the package's bin) builds dist/ when needed and calls runCli;
// the image runs this file directly: node dist/src/cli/main.js serve.
import { parseArgs } from 'node:util';
import { ConfigError, defaultConfigPath, loadConfigFile } from '../config/load';
import { gatewayConfigCheck } from '../gateway';
import { adminKeyEntry, createKey, hashInput } from './keys';
import { ADMIN_VERBS, adminUrlOf, runAdminVerb, UsageError, type Printed } from './admin-keys';
import { runSpend, runUsageExport } from './admin-spend';
import { runTeamVerb, TEAM_VERBS } from './admin-teams';
import { packageVersion } from '../plumbing/version';

export const USAGE = `usage: sluice <command>

  sluice serve                      run the gateway in this process (GATEWAY_CONFIG or config/gateway.yaml)
  sluice keys create --id NAME [--org ORG] [--team TEAM] [--models GLOB,...]
                                    print a new key once, and its config entry
  sluice keys create --admin        print a new admin key once, and its admin.keys entry
  sluice keys hash                  read a key on stdin, print its SHA-256 digest

  With --admin-url URL (or SLUICE_ADMIN_URL) and SLUICE_ADMIN_KEY, against the admin API:
  sluice keys create --id NAME [--org ORG] [--team TEAM] [--models GLOB,...] [--limits JSON] [--priority P] [--expires-at ISO]
  sluice keys list | show ID | revoke ID
  sluice keys update ID [--org ORG] [--team TEAM] [--models ...] [--limits JSON] [--priority P] [--expires-at ISO] [--clear FIELD,...]
  sluice keys rotate ID [--grace SECONDS]
  sluice teams create --name NAME --org ORG [--models GLOB,...] [--limits JSON]
  sluice teams list | show NAME | delete NAME
  sluice teams update NAME [--models ...] [--limits JSON] [--clear FIELD,...]
  sluice spend [--key ID] [--team TEAM] [--org ORG] [--user USER] [--from YYYY-MM-DD] [--to YYYY-MM-DD]
                                    sums per day and in all (default: today, the whole gateway)
  sluice usage export --since TIME [--until TIME] [--team TEAM] [--user USER] [--format jsonl|csv]
                                    the usage records, written as they arrive
  sluice config check [FILE]        validate a config without starting anything; exit 0 or 1
  sluice help, --help, -h           print this text
  sluice --version                  print the version

Environment: GATEWAY_CONFIG (config file), PORT (overrides server.port), LOG_LEVEL (info),
SLUICE_ADMIN_URL and SLUICE_ADMIN_KEY (the admin API: the keys and teams verbs, spend, usage export).
`;

function readStdin(): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (c: string) => { text += c; });
    process.stdin.on('end', () => resolve(text));
  });
}

/** Every problem of a config file, in one round: schema, cross-references and plugin settings; [] when it is valid. */
export function checkConfigFile(file: string): string[] {
  try {
    loadConfigFile(file, process.env, gatewayConfigCheck());
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

function printed(out: Printed): number {
  process.stdout.write(out.stdout);
  process.stderr.write(out.stderr);
  return out.code;
}

/** The exit code, or -1 while `serve` keeps the process running. */
async function run(argv: string[]): Promise<number> {
  const [group, verb, ...rest] = argv;
  if (group === 'help' || group === '--help' || group === '-h') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (group === '--version' || group === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  if (group === 'serve' && verb === undefined) {
    await import('../server').then((m) => m.main());
    return -1;
  }
  if (group === 'keys' && (ADMIN_VERBS as readonly string[]).includes(verb) && (verb !== 'create' || adminUrlOf(rest, process.env) !== undefined)) {
    return printed(await runAdminVerb(verb, rest, process.env));
  }
  if (group === 'teams' && (TEAM_VERBS as readonly string[]).includes(verb)) return printed(await runTeamVerb(verb, rest, process.env));
  if (group === 'spend') return printed(await runSpend(argv.slice(1), process.env));
  if (group === 'usage' && verb === 'export') return printed(await runUsageExport(rest, process.env, process.stdout));
  if (group === 'keys' && verb === 'create' && rest.length === 1 && rest[0] === '--admin') {
    const { key, entry } = adminKeyEntry();
    process.stdout.write(`admin key (shown once, store it now): ${key}\n\nadd under admin.keys: in the config\n${entry}\n`);
    return 0;
  }
  if (group === 'keys' && verb === 'create') {
    const { values } = parseArgs({ args: rest, options: { id: { type: 'string' }, org: { type: 'string' }, models: { type: 'string' } } });
    if (!values.id) throw new Error('--id NAME is required');
    const { key, entry } = createKey({ id: values.id, org: values.org, models: values.models?.split(',').map((m) => m.trim()).filter(Boolean) });
    process.stdout.write(`key (shown once, store it now): ${key}\n\nadd under keys: in the config\n${entry}\n`);
    return 0;
  }
  if (group === 'keys' && verb === 'hash' && rest.length === 0) {
    process.stdout.write(`${hashInput(await readStdin())}\n`);
    return 0;
  }
  if (group === 'config' && verb === 'check' && rest.length <= 1) {
    const file = rest[0] ?? defaultConfigPath();
    const problems = checkConfigFile(file);
    if (problems.length === 0) {
      process.stdout.write(`${file}: ok\n`);
      return 0;
    }
    process.stdout.write(`${file}: ${problems.length} problem(s)\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
    return 1;
  }
  const what = argv.length === 0 ? 'no command given' : `unknown command: ${argv.join(' ')}`;
  process.stderr.write(`sluice: ${what}\n\n${USAGE}`);
  return 2;
}

/** Runs the command line and sets the exit code; a usage mistake exits 2 with one line on stderr. */
export function runCli(argv: string[]): void {
  run(argv).then((code) => { if (code >= 0) process.exitCode = code; }, (err: Error) => {
    process.stderr.write(`sluice: ${err.message}\n`);
    if (err instanceof UsageError) process.stderr.write(`\n${USAGE}`);
    process.exitCode = 2;
  });
}

if (require.main === module) runCli(process.argv.slice(2));
