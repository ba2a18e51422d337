// `sluice teams create|list|show|update|delete` against the admin API
// (docs/admin.md#teams), with the admin URL and key as `sluice keys` takes
// them. Answers print as JSON (list: the teams); a refusal prints its status,
// reason and message on stderr and exits 1.
//
//   sluice teams create --name search --org acme --models 'chat-*' --limits '{"tokens":200000}'
//   sluice teams update search --limits '{"tokens":400000}' --clear models
import { parseArgs } from 'node:util';
import { callAdmin, isPrinted, jsonOf, jsonOption, listOf, UsageError, type AdminRequest, type Printed } from './admin-keys';

export const TEAM_VERBS = ['create', 'list', 'show', 'update', 'delete'] as const;

const ADMIN_URL = { 'admin-url': { type: 'string' } } as const;
const ENTRY_OPTIONS = { models: { type: 'string' }, limits: { type: 'string' } } as const;

/** The team fields the options set (update: --clear sets fields to null). */
function entryOf(values: Record<string, string | undefined>, clear?: string): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (values.models !== undefined) body.models = listOf(values.models);
  if (values.limits !== undefined) body.limits = jsonOption('limits', values.limits);
  for (const field of listOf(clear ?? '')) body[field] = null;
  return body;
}

/** The request a verb makes, from its arguments. */
export function teamRequest(verb: string, args: string[]): AdminRequest {
  const named = (options = {}) => {
    const { values, positionals } = parseArgs({ args, options: { ...options, ...ADMIN_URL }, allowPositionals: true });
    if (positionals.length !== 1) throw new UsageError(`sluice teams ${verb} takes one team name`);
    return { name: encodeURIComponent(positionals[0]), values: values as Record<string, string | undefined> };
  };
  switch (verb) {
    case 'create': {
      const { values } = parseArgs({ args, options: { ...ENTRY_OPTIONS, name: { type: 'string' }, org: { type: 'string' }, ...ADMIN_URL } });
      if (!values.name || !values.org) throw new UsageError('--name NAME and --org ORG are required');
      return { method: 'POST', path: '/admin/teams', body: { name: values.name, org: values.org, ...entryOf(values) } };
    }
    case 'list':
      parseArgs({ args, options: ADMIN_URL });
      return { method: 'GET', path: '/admin/teams' };
    case 'show': return { method: 'GET', path: `/admin/teams/${named().name}` };
    case 'delete': return { method: 'DELETE', path: `/admin/teams/${named().name}` };
    case 'update': {
      const { name, values } = named({ ...ENTRY_OPTIONS, clear: { type: 'string' } });
      return { method: 'PATCH', path: `/admin/teams/${name}`, body: entryOf(values, values.clear) };
    }
    default: throw new UsageError(`unknown verb teams ${verb}`);
  }
}

export async function runTeamVerb(verb: string, args: string[], env: NodeJS.ProcessEnv): Promise<Printed> {
  const res = await callAdmin(teamRequest(verb, args), args, env, `teams ${verb}`);
  if (!(res instanceof Response)) return res;
  const body = await jsonOf(res);
  if (isPrinted(body)) return body;
  return { stdout: `${JSON.stringify(verb === 'list' ? body.data : body, null, 2)}\n`, stderr: '', code: 0 };
}
