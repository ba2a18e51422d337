// The teams in force in this process, by name: the config's (each reload
// brings its own) and, behind them, the ones made through the admin API
// (kept current by the runtime keys' source, src/keys/). A runtime team never
// shadows a configured one. It also answers the allow-list a key's team and
// org add to the key's own: a model must pass all three.
//
//   teams.applyConfig(config);               // at start and on each reload
//   teams.put(record); teams.remove('search');
//   teams.allows('acme', 'search', 'chat-large')
import type { GatewayConfig } from '../config/schema';
import type { Team, TeamLookup } from '../contract/types';
import { compileGlobList, type Matcher } from '../auth/glob';
import type { StoredTeam } from './stored-team';

/** A team with its allow-list compiled once. */
interface Compiled extends Team {
  readonly mayUse: Matcher;
  readonly anyModel: boolean;
}

interface Held {
  team: Compiled;
  record: StoredTeam;
  /** The record's JSON: what tells a change from a repeat. */
  json: string;
}

const anyOf = (models: readonly string[] | undefined): boolean => models === undefined || models.includes('*');

function compile(name: string, entry: Omit<Team, 'name'>): Compiled {
  return { name, org: entry.org, ...(entry.models && { models: entry.models }), ...(entry.limits && { limits: entry.limits }), mayUse: compileGlobList(entry.models), anyModel: anyOf(entry.models) };
}

export class Teams implements TeamLookup {
  private configured = new Map<string, Compiled>();
  private orgs = new Map<string, { mayUse: Matcher; anyModel: boolean }>();
  private readonly runtime = new Map<string, Held>();

  /** The config's teams and orgs' allow-lists (at start and on each reload). */
  applyConfig({ teams, orgs }: Pick<GatewayConfig, 'teams' | 'orgs'>): void {
    const configured = new Map<string, Compiled>();
    for (const [name, team] of Object.entries(teams ?? {})) {
      const same = this.configured.get(name);
      // An unchanged team keeps its object: what was compiled for it stays.
      configured.set(name, same !== undefined && JSON.stringify(same) === JSON.stringify(compile(name, team)) ? same : compile(name, team));
    }
    this.configured = configured;
    const allowLists = new Map<string, { mayUse: Matcher; anyModel: boolean }>();
    for (const [name, org] of Object.entries(orgs ?? {})) if (org.models !== undefined) allowLists.set(name, { mayUse: compileGlobList(org.models), anyModel: anyOf(org.models) });
    this.orgs = allowLists;
  }

  get(name: string): Team | undefined {
    return this.configured.get(name) ?? this.runtime.get(name)?.team;
  }

  isConfigured(name: string): boolean {
    return this.configured.has(name);
  }

  /** The runtime teams' records, by name. */
  list(): StoredTeam[] {
    return [...this.runtime.values()].map((h) => h.record).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  record(name: string): StoredTeam | undefined {
    return this.runtime.get(name)?.record;
  }

  /** Whether a key of `org` in `team` may use `model` as far as its team and org say (an unknown team: no). */
  allows(org: string | null, team: string | null, model: string): boolean {
    if (org !== null) {
      const own = this.orgs.get(org);
      if (own !== undefined && !own.mayUse(model)) return false;
    }
    if (team === null) return true;
    const t = this.configured.get(team) ?? this.runtime.get(team)?.team;
    return t !== undefined && t.mayUse(model);
  }

  /** Whether the team and org admit every model (an unknown team admits none). */
  anyModel(org: string | null, team: string | null): boolean {
    if (org !== null && this.orgs.get(org)?.anyModel === false) return false;
    if (team === null) return true;
    const t = this.configured.get(team) ?? this.runtime.get(team)?.team;
    return t !== undefined && t.anyModel;
  }

  /** Adds or changes one runtime team; true when something changed. */
  put(record: StoredTeam): boolean {
    const json = JSON.stringify(record);
    if (this.runtime.get(record.name)?.json === json) return false;
    this.runtime.set(record.name, { team: compile(record.name, record.entry), record, json });
    return true;
  }

  /** Drops one runtime team; true when it was there. */
  remove(name: string): boolean {
    return this.runtime.delete(name);
  }

  /** Makes the runtime teams exactly these records; true when something changed. */
  replace(records: readonly StoredTeam[]): boolean {
    const names = new Set(records.map((r) => r.name));
    let changed = false;
    for (const name of [...this.runtime.keys()]) if (!names.has(name)) changed = this.remove(name) || changed;
    for (const record of records) changed = this.put(record) || changed;
    return changed;
  }
}
