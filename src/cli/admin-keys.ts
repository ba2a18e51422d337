// `sluice keys create|list|show|update|revoke|rotate` against the admin API
// (docs/admin.md): --admin-url or SLUICE_ADMIN_URL names it, and the admin
// key comes from SLUICE_ADMIN_KEY only (never an argument: a process list
// would show it). Answers are printed as JSON; a new key (create, rotate) is
// printed once, on a line of its own, before it. A refusal prints the error
// object's reason and message on stderr and exits 1.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {}

/** What a verb prints and its exit code. */
export interface Printed {
  stdout: string;
  stderr: string;
  code: number;
}

export const ADMIN_VERBS = ['create', 'list', 'show', 'update', 'revoke', 'rotate'] as const;

const ENTRY_OPTIONS = {
  org: { type: 'string' }, team: { type: 'string' }, models: { type: 'string' }, limits: { type: 'string' }, priority: { type: 'string' }, 'expires-at': { type: 'string' },
} as const;

export const listOf = (csv: string): string[] => csv.split(',').map((m) => m.trim()).filter(Boolean);

export function jsonOption(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--${name} must be JSON, such as '{"requests": 60, "windowSeconds": 60}'`);
  }
}

/** The key fields the options set (update: --clear sets fields to null). */
function entryOf(values: Record<string, string | undefined>, clear?: string): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (values.org !== undefined) body.org = values.org;
  if (values.team !== undefined) body.team = values.team;
  if (values.models !== undefined) body.models = listOf(values.models);
  if (values.limits !== undefined) body.limits = jsonOption('limits', values.limits);
  if (values.priority !== undefined) body.priority = values.priority;
  if (values['expires-at'] !== undefined) body.expiresAt = values['expires-at'];
  for (const field of listOf(clear ?? '')) body[field] = null;
  return body;
}

export interface AdminRequest {
  method: string;
  path: string;
  body?: unknown;
}

/** The request a verb makes, from its arguments. */
export function adminRequest(verb: string, args: string[]): AdminRequest {
  const one = (options: ParseArgsConfig['options'] = {}) => {
    const { values, positionals } = parseArgs({ args, options: { ...options, 'admin-url': { type: 'string' } }, allowPositionals: true });
    if (positionals.length !== 1) throw new UsageError(`sluice keys ${verb} takes one key id`);
    return { id: encodeURIComponent(positionals[0]), values: values as Record<string, string | undefined> };
  };
  switch (verb) {
    case 'create': {
      const { values } = parseArgs({ args, options: { ...ENTRY_OPTIONS, id: { type: 'string' }, 'admin-url': { type: 'string' } } });
      if (!values.id) throw new UsageError('--id NAME is required');
      return { method: 'POST', path: '/admin/keys', body: { id: values.id, ...entryOf(values) } };
    }
    case 'list':
      parseArgs({ args, options: { 'admin-url': { type: 'string' } } });
      return { method: 'GET', path: '/admin/keys' };
    case 'show': return { method: 'GET', path: `/admin/keys/${one().id}` };
    case 'revoke': return { method: 'DELETE', path: `/admin/keys/${one().id}` };
    case 'update': {
      const { id, values } = one({ ...ENTRY_OPTIONS, clear: { type: 'string' } });
      return { method: 'PATCH', path: `/admin/keys/${id}`, body: entryOf(values, values.clear) };
    }
    case 'rotate': {
      const { id, values } = one({ grace: { type: 'string' } });
      return { method: 'POST', path: `/admin/keys/${id}/rotate`, body: values.grace === undefined ? {} : { graceSeconds: Number(values.grace) } };
    }
    default: throw new UsageError(`unknown verb keys ${verb}`);
  }
}

/** The admin URL the arguments or the environment give; undefined: none (keys create then works offline). */
export function adminUrlOf(args: string[], env: NodeJS.ProcessEnv): string | undefined {
  const i = args.findIndex((a) => a === '--admin-url' || a.startsWith('--admin-url='));
  if (i === -1) return env.SLUICE_ADMIN_URL || undefined;
  return args[i].includes('=') ? args[i].slice('--admin-url='.length) : args[i + 1];
}

const failed = (stderr: string): Printed => ({ stdout: '', stderr: `sluice: ${stderr}\n`, code: 1 });

/**
 * Makes `request` against the admin API the arguments or environment name:
 * its response when it answered 2xx, else what to print (unreachable, or
 * the error object's reason and message). `command` names the verb in usage errors.
 */
export async function callAdmin(request: AdminRequest, args: string[], env: NodeJS.ProcessEnv, command: string): Promise<Response | Printed> {
  const base = adminUrlOf(args, env);
  if (!base) throw new UsageError(`sluice ${command} needs the admin API: --admin-url URL or SLUICE_ADMIN_URL`);
  const key = env.SLUICE_ADMIN_KEY;
  if (!key) throw new UsageError('set SLUICE_ADMIN_KEY to an admin key (one whose digest is in admin.keys)');
  const url = `${base.replace(/\/+$/, '')}${request.path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: request.method,
      headers: { authorization: `Bearer ${key}`, ...(request.body !== undefined && { 'content-type': 'application/json' }) },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    });
  } catch (err) {
    return failed(`cannot reach the admin API at ${url}: ${((err as Error).cause as Error | undefined)?.message ?? (err as Error).message}`);
  }
  if (res.ok) return res;
  const body = await jsonOf(res);
  return isPrinted(body) ? body : failed(`${res.status} ${body.error?.reason ?? 'error'}: ${body.error?.message ?? ''}`);
}

/** The answer's JSON object, or what to print when it is not JSON. */
export async function jsonOf(res: Response): Promise<Record<string, any> | Printed> {
  try {
    return JSON.parse(await res.text()) as Record<string, any>;
  } catch {
    return failed(`the admin API answered ${res.status} with something other than JSON`);
  }
}

/** Runs one verb against the admin API. */
export async function runAdminVerb(verb: string, args: string[], env: NodeJS.ProcessEnv): Promise<Printed> {
  const res = await callAdmin(adminRequest(verb, args), args, env, `keys ${verb}`);
  if (!(res instanceof Response)) return res;
  const body = await jsonOf(res);
  if (isPrinted(body)) return body;
  const { key: made, ...rest } = body;
  const shown = made === undefined ? '' : `key (shown once, store it now): ${made}\n`;
  return { stdout: `${shown}${JSON.stringify(verb === 'list' ? body.data : rest, null, 2)}\n`, stderr: '', code: 0 };
}

export const isPrinted = (x: object): x is Printed => 'code' in x && 'stderr' in x;
