// What the admin API accepts for a team, checked as a team in the config file
// is: its name (letters, digits, dot, dash, underscore), its org against the
// config's orgs, its models, and its limits by the plugin registry against the
// fields the plugins in the chain declare. Each problem is named by its field;
// the first one is the error's `param`.
//
//   POST  {"name":"search","org":"acme","models":["chat-*"],"limits":{"tokens":200000,"dollars":50}}
//   PATCH {"limits":{"tokens":400000},"models":null}          null clears a field
import { dirname } from 'node:path';
import type { LoadedConfig } from '../config/load';
import { configIssues } from '../config/issues';
import { teamName, teamSchema } from '../config/schema';
import { GatewayError } from '../contract/errors';
import type { PluginRegistry } from '../pipeline/registry';
import type { StoredTeam, TeamEntry } from '../teams/stored-team';
import { invalid, type Problem } from './key-input';

/** What a team is checked against: the config in force and the plugins it runs. */
export interface TeamRules {
  loaded: LoadedConfig;
  registry: PluginRegistry;
}

// The registry checks a team under this name, whatever its own (which may be the problem).
const CHECKED = 'checked';

function entryProblems(candidate: Record<string, unknown>, { loaded, registry }: TeamRules): Problem[] {
  const problems: Problem[] = [];
  const parsed = teamSchema.safeParse(candidate);
  if (!parsed.success) for (const issue of parsed.error.issues) problems.push(...configIssues(issue));
  const { orgs, plugins, pricing } = loaded.config;
  const org = candidate.org;
  if (typeof org === 'string' && org !== '' && !Object.hasOwn(orgs, org)) {
    problems.push(['org', `unknown org "${org}"; a team's org is one of the config's orgs (${Object.keys(orgs).join(', ') || 'none yet: add it under orgs:'})`]);
  }
  const prefix = `teams.${CHECKED}.`;
  for (const line of registry.check({ teams: { [CHECKED]: candidate as Partial<TeamEntry> }, orgs, plugins, pricing }, dirname(loaded.file))) {
    if (!line.startsWith(prefix)) continue;
    const at = line.indexOf(': ');
    problems.push([line.slice(prefix.length, at), line.slice(at + 2)]);
  }
  return problems;
}

function checked(candidate: Record<string, unknown>, rules: TeamRules, problems: Problem[] = []): TeamEntry {
  problems.push(...entryProblems(candidate, rules));
  if (problems.length > 0) throw invalid(problems);
  return teamSchema.parse(candidate) as TeamEntry;
}

const needObject = (example: string): GatewayError =>
  new GatewayError('invalid_request', `Send a JSON object with Content-Type: application/json, such as ${example}.`);

/** A new team: its name and entry. */
export function createTeamInput(body: Record<string, unknown> | undefined, rules: TeamRules): { name: string; entry: TeamEntry } {
  if (body === undefined) throw needObject('{"name": "search", "org": "acme"}');
  const { name, ...candidate } = body;
  const problems: Problem[] = [];
  const named = teamName.safeParse(name);
  if (!named.success) problems.push(['name', name === undefined ? 'required: the team\'s name, 1-64 letters, digits, dot, dash or underscore' : named.error.issues[0].message]);
  return { name: name as string, entry: checked(candidate, rules, problems) };
}

/** A team changed: its whole new entry. A field set to null is cleared; the name and the org never change. */
export function patchTeamInput(body: Record<string, unknown> | undefined, current: StoredTeam, rules: TeamRules): TeamEntry {
  if (body === undefined || Object.keys(body).length === 0) throw needObject('{"limits": {"tokens": 400000}} with the fields to change (models, limits)');
  if ('name' in body) throw invalid([['name', 'a team\'s name never changes; create a team with the new name and move its keys']]);
  if ('org' in body && body.org !== current.entry.org) throw invalid([['org', 'a team\'s org never changes; create a team in the other org and move its keys']]);
  const candidate: Record<string, unknown> = { ...current.entry };
  for (const [field, value] of Object.entries(body)) {
    // Defined, not assigned: a field named __proto__ is a field (an unknown one), not the object's prototype.
    if (value === null) delete candidate[field]; else Object.defineProperty(candidate, field, { value, enumerable: true, writable: true, configurable: true });
  }
  return checked(candidate, rules);
}
