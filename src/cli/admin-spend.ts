// `sluice spend` and `sluice usage export` against the admin API
// (docs/spend.md), with the admin URL and key as `sluice keys` takes them.
// spend prints the answer's JSON; the export writes the records to stdout as
// they arrive (JSON Lines or CSV), never holding the whole export.
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { callAdmin, isPrinted, jsonOf, UsageError, type AdminRequest, type Printed } from './admin-keys';

const ADMIN_URL = { 'admin-url': { type: 'string' } } as const;

function queryString(values: Record<string, string | undefined>): string {
  const query = new URLSearchParams(Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined && e[0] !== 'admin-url'));
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

/** GET /admin/spend with the options given (none: today's sums for the whole gateway). */
export function spendRequest(args: string[]): AdminRequest {
  const { values } = parseArgs({ args, options: { key: { type: 'string' }, team: { type: 'string' }, org: { type: 'string' }, user: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, ...ADMIN_URL } });
  return { method: 'GET', path: `/admin/spend${queryString(values)}` };
}

/** GET /admin/usage: --since is required, --format jsonl (default) or csv. */
export function usageRequest(args: string[]): AdminRequest {
  const { values } = parseArgs({ args, options: { since: { type: 'string' }, until: { type: 'string' }, team: { type: 'string' }, user: { type: 'string' }, format: { type: 'string' }, ...ADMIN_URL } });
  if (values.since === undefined) throw new UsageError('sluice usage export needs --since TIME (2026-03-01, 2026-03-01T12:00:00Z or epoch milliseconds)');
  if (values.format !== undefined && values.format !== 'csv' && values.format !== 'jsonl') throw new UsageError('--format must be csv or jsonl');
  return { method: 'GET', path: `/admin/usage${queryString(values)}` };
}

export async function runSpend(args: string[], env: NodeJS.ProcessEnv): Promise<Printed> {
  const res = await callAdmin(spendRequest(args), args, env, 'spend');
  if (!(res instanceof Response)) return res;
  const body = await jsonOf(res);
  return isPrinted(body) ? body : { stdout: `${JSON.stringify(body, null, 2)}\n`, stderr: '', code: 0 };
}

/** Writes the export to `out` as it arrives; what is left to print is the failure, if any. */
export async function runUsageExport(args: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream): Promise<Printed> {
  const res = await callAdmin(usageRequest(args), args, env, 'usage export');
  if (!(res instanceof Response)) return res;
  try {
    for await (const chunk of res.body ?? []) if (!out.write(chunk as Uint8Array)) await once(out, 'drain');
  } catch (err) {
    return { stdout: '', stderr: `sluice: the export was cut short: ${(err as Error).message}\n`, code: 1 };
  }
  return { stdout: '', stderr: '', code: 0 };
}
