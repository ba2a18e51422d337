// What the admin API accepts for a key, checked as a key in the config file
// is: the core's key schema, the org against the config's orgs, the team
// against the teams in force (its org must be the key's), and every
// other field (limits.requests, a plugin's own key fields) by the plugin
// registry against the fields the plugins in the chain declare. Each problem
// is named by its field; the first one is the error's `param`.
//
//   POST  {"id":"ci-bot","org":"acme","team":"search","models":["chat-*"],"limits":{"requests":60},"priority":"low","expiresAt":"2026-01-31T00:00:00Z"}
//   PATCH {"limits":{"requests":120},"org":null}          null clears a field
//   POST /rotate {"graceSeconds":3600}
import { dirname } from 'node:path';
import { z } from 'zod';
import type { LoadedConfig } from '../config/load';
import { configIssues } from '../config/issues';
import { teamProblem } from '../config/cross-check';
import { keySchema } from '../config/schema';
import { intLike } from '../config/values';
import { GatewayError } from '../contract/errors';
import type { PluginRegistry } from '../pipeline/registry';
import type { KeyEntry, TeamLookup } from '../contract/types';
import type { StoredKey } from '../keys/stored-key';

/** What a key is checked against: the config in force and the plugins it runs. */
export interface KeyRules {
  loaded: LoadedConfig;
  registry: PluginRegistry;
  /** The teams in force (the config's and the runtime ones): what a key's team is checked against. */
  teams: TeamLookup;
}

export type Problem = readonly [path: string, problem: string];

/** A rotation's grace period when the request names none, and the longest one. */
export const DEFAULT_GRACE_SECONDS = 3600;
export const MAX_GRACE_SECONDS = 30 * 86_400;

const NOT_YOURS: Readonly<Record<string, string>> = {
  sha256: 'the gateway makes the key and keeps only its digest; leave sha256 out',
};
const PLACEHOLDER_DIGEST = '0'.repeat(64);
const instant = z.iso.datetime({ offset: true });

/** Every problem, named by its field; the first one is the error's `param`. */
export function invalid(problems: readonly Problem[]): GatewayError {
  return new GatewayError('invalid_request', problems.map(([path, p]) => `${path}: ${p}`).join('; '), { param: problems[0][0] });
}

/** The problems of a key entry (with its id), each named by its field. */
function entryProblems(candidate: Record<string, unknown>, rules: KeyRules): Problem[] {
  const { loaded, registry } = rules;
  const problems: Problem[] = [];
  for (const field of Object.keys(NOT_YOURS)) if (field in candidate) problems.push([field, NOT_YOURS[field]]);
  const parsed = keySchema.safeParse({ ...candidate, sha256: PLACEHOLDER_DIGEST });
  if (!parsed.success) for (const issue of parsed.error.issues) problems.push(...configIssues(issue));
  const { orgs, plugins, pricing } = loaded.config;
  const org = candidate.org;
  if (typeof org === 'string' && org !== '' && !Object.hasOwn(orgs, org)) {
    problems.push(['org', `unknown org "${org}"; a key's org is one of the config's orgs (${Object.keys(orgs).join(', ') || 'none yet: add it under orgs:'})`]);
  }
  const team = candidate.team;
  if (typeof team === 'string' && team !== '') {
    const owner = rules.teams.get(team)?.org;
    const problem = teamProblem(team, owner, typeof org === 'string' ? org : undefined);
    if (problem !== undefined) problems.push(['team', owner === undefined ? `${problem}; a key's team is one of the config's teams or one made with POST /admin/teams` : problem]);
  }
  const { sha256: _mine, ...checked } = candidate;
  for (const line of registry.check({ keys: [checked], orgs, plugins, pricing }, dirname(loaded.file))) {
    if (!line.startsWith('keys[0].')) continue;
    const at = line.indexOf(': ');
    problems.push([line.slice('keys[0].'.length, at), line.slice(at + 2)]);
  }
  return problems;
}

/** expiresAt as stored (ISO 8601, UTC), null to clear it, undefined when not given. */
function expiryOf(value: unknown, problems: Problem[]): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== 'string' || !instant.safeParse(value).success) {
    problems.push(['expiresAt', 'must be an ISO 8601 date-time with its offset, such as 2026-01-31T00:00:00Z']);
    return undefined;
  }
  const at = Date.parse(value);
  if (at <= Date.now()) problems.push(['expiresAt', 'must be in the future; to end a key now, revoke it (DELETE /admin/keys/{id})']);
  return new Date(at).toISOString();
}

const withoutId = ({ id: _id, sha256: _digest, ...entry }: Record<string, unknown>): KeyEntry => entry;

function checked(candidate: Record<string, unknown>, expiresAt: unknown, rules: KeyRules): { entry: KeyEntry; expiresAt: string | null | undefined } {
  const problems: Problem[] = [];
  const expiry = expiryOf(expiresAt, problems);
  problems.push(...entryProblems(candidate, rules));
  if (problems.length > 0) throw invalid(problems);
  const parsed = keySchema.parse({ ...candidate, sha256: PLACEHOLDER_DIGEST }) as Record<string, unknown>;
  return { entry: withoutId(parsed), expiresAt: expiry };
}

const needObject = (example: string): GatewayError =>
  new GatewayError('invalid_request', `Send a JSON object with Content-Type: application/json, such as ${example}.`);

/** A new key: its id, entry and expiry. */
export function createInput(body: Record<string, unknown> | undefined, rules: KeyRules): { id: string; entry: KeyEntry; expiresAt?: string } {
  if (body === undefined) throw needObject('{"id": "ci-bot", "org": "acme"}');
  const { expiresAt, ...candidate } = body;
  const { entry, expiresAt: expiry } = checked(candidate, expiresAt, rules);
  return { id: candidate.id as string, entry, ...(expiry != null && { expiresAt: expiry }) };
}

/** A key changed: its whole new entry and expiry. A field set to null is cleared; the id never changes. */
export function patchInput(body: Record<string, unknown> | undefined, current: StoredKey, rules: KeyRules): { entry: KeyEntry; expiresAt?: string } {
  if (body === undefined || Object.keys(body).length === 0) throw needObject('{"limits": {"requests": 120}} with the fields to change (org, models, limits, priority, expiresAt)');
  if ('id' in body) throw invalid([['id', 'a key\'s id never changes; create a key with the new id and revoke this one']]);
  const { expiresAt, ...changes } = body;
  const candidate: Record<string, unknown> = { ...current.entry, id: current.id };
  for (const [field, value] of Object.entries(changes)) {
    // Defined, not assigned: a field named __proto__ is a field (an unknown one), not the object's prototype.
    if (value === null) delete candidate[field]; else Object.defineProperty(candidate, field, { value, enumerable: true, writable: true, configurable: true });
  }
  const { entry, expiresAt: expiry } = checked(candidate, expiresAt, rules);
  const next = expiry === undefined ? current.expiresAt : expiry ?? undefined;
  return { entry, ...(next !== undefined && { expiresAt: next }) };
}

const rotateSchema = z.strictObject({ graceSeconds: intLike(0, MAX_GRACE_SECONDS).default(DEFAULT_GRACE_SECONDS) });

/** A rotation: how long the old key stays valid beside the new one. */
export function rotateInput(body: Record<string, unknown> | undefined): { graceSeconds: number } {
  const parsed = rotateSchema.safeParse(body ?? {});
  if (!parsed.success) throw invalid(parsed.error.issues.flatMap((issue) => configIssues(issue)));
  return parsed.data;
}
