// The admin API's teams: create, list, read, change (models, limits) and
// delete. Teams made here live beside the runtime keys (src/keys/: Redis or
// the keys file) and reach every replica and worker as keys do; the config
// file's teams are listed and read too, but change only in the file. A team
// is deleted only while no key names it (409 with the count otherwise).
import { GatewayError } from '../contract/errors';
import type { KeyStore } from '../keys/store';
import type { Teams } from '../teams/teams';
import { teamView, type StoredTeam } from '../teams/stored-team';
import { createTeamInput, patchTeamInput, type TeamRules } from './team-input';
import { route, type AdminCall, type AdminRoute } from './router';

export interface TeamRoutesDeps {
  rules(): TeamRules;
  /** Where runtime teams are written (the runtime keys' store); undefined while the config has no `admin` section. */
  store(): KeyStore | undefined;
  /** The teams in force in this process. */
  teams(): Teams;
}

const now = (): string => new Date().toISOString();

function storeOf(deps: TeamRoutesDeps): KeyStore {
  const store = deps.store();
  if (store === undefined) throw new GatewayError('store_unavailable', 'Runtime teams are off: the config in force has no admin section.');
  return store;
}

const unknownTeam = (name: string): GatewayError =>
  new GatewayError('not_found', `No team "${name.slice(0, 64)}". GET /admin/teams lists the teams.`, { param: 'name' });

const configTeam = (deps: TeamRoutesDeps, name: string) => {
  const { teams } = deps.rules().loaded.config;
  return Object.hasOwn(teams, name) ? teams[name] : undefined;
};

/** How many keys, the config's and the runtime ones, name the team. */
async function keysOf(deps: TeamRoutesDeps, name: string): Promise<number> {
  const configured = deps.rules().loaded.config.keys.filter((k) => k.team === name).length;
  const runtime = deps.store() === undefined ? 0 : (await storeOf(deps).list()).filter((k) => k.entry.team === name).length;
  return configured + runtime;
}

/** Refuses a change to a team of the config file (409): it changes in the file. */
function runtimeOnly(deps: TeamRoutesDeps, call: AdminCall): string {
  const { name } = call.params;
  call.team = name;
  if (configTeam(deps, name) !== undefined) throw new GatewayError('conflict', `Team "${name}" is in the config file; change it there and reload.`, { param: 'name' });
  return name;
}

async function create(deps: TeamRoutesDeps, call: AdminCall) {
  const input = createTeamInput(call.body, deps.rules());
  call.team = input.name;
  if (configTeam(deps, input.name) !== undefined) throw new GatewayError('conflict', `Team "${input.name}" is in the config file; pick another name.`, { param: 'name' });
  const at = now();
  const record: StoredTeam = { name: input.name, entry: input.entry, createdAt: at, updatedAt: at };
  if (!await storeOf(deps).createTeam(record)) throw new GatewayError('conflict', `Team "${input.name}" exists; pick another name, or change that team with PATCH.`, { param: 'name' });
  return { status: 201, body: teamView(record.name, record.entry, 'runtime', 0, record) };
}

async function list(deps: TeamRoutesDeps) {
  const { keys, teams } = deps.rules().loaded.config;
  const runtimeKeys = deps.store() === undefined ? [] : await storeOf(deps).list();
  const count = (name: string): number => keys.filter((k) => k.team === name).length + runtimeKeys.filter((k) => k.entry.team === name).length;
  const configured = Object.entries(teams).map(([name, t]) => teamView(name, t, 'config', count(name)));
  const runtime = deps.store() === undefined ? [] : (await storeOf(deps).listTeams()).filter((t) => !Object.hasOwn(teams, t.name)).map((t) => teamView(t.name, t.entry, 'runtime', count(t.name), t));
  return { body: { object: 'list', data: [...configured, ...runtime] } };
}

async function show(deps: TeamRoutesDeps, call: AdminCall) {
  const { name } = call.params;
  call.team = name;
  const configured = configTeam(deps, name);
  if (configured !== undefined) return { body: teamView(name, configured, 'config', await keysOf(deps, name)) };
  const record = await storeOf(deps).getTeam(name);
  if (record === undefined) throw unknownTeam(name);
  return { body: teamView(name, record.entry, 'runtime', await keysOf(deps, name), record) };
}

async function update(deps: TeamRoutesDeps, call: AdminCall) {
  const name = runtimeOnly(deps, call);
  const rules = deps.rules();
  const changed = await storeOf(deps).updateTeam(name, (current) => ({ ...current, entry: patchTeamInput(call.body, current, rules), updatedAt: now() }));
  if (changed === undefined) throw unknownTeam(name);
  return { body: teamView(name, changed.entry, 'runtime', await keysOf(deps, name), changed) };
}

async function remove(deps: TeamRoutesDeps, call: AdminCall) {
  const name = runtimeOnly(deps, call);
  const removed = await storeOf(deps).removeTeam(name);
  if (removed === undefined) throw unknownTeam(name);
  if (Array.isArray(removed)) {
    const n = removed.length;
    throw new GatewayError('conflict', `Team "${name}" is named by ${n} key${n === 1 ? '' : 's'}; move ${n === 1 ? 'it' : 'them'} to another team (PATCH /admin/keys/{id} {"team": …}) or revoke ${n === 1 ? 'it' : 'them'} first.`, { param: 'name' });
  }
  return { body: { name, deleted: true } };
}

export function teamRoutes(deps: TeamRoutesDeps): AdminRoute[] {
  return [
    route('POST', '/admin/teams', 'teams.create', (call) => create(deps, call)),
    route('GET', '/admin/teams', 'teams.list', () => list(deps)),
    route('GET', '/admin/teams/:name', 'teams.show', (call) => show(deps, call)),
    route('PATCH', '/admin/teams/:name', 'teams.update', (call) => update(deps, call)),
    route('DELETE', '/admin/teams/:name', 'teams.delete', (call) => remove(deps, call)),
  ];
}
