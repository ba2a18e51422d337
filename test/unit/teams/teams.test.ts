// Teams in the config (each problem with its path) and the directory that
// answers a key's team and org allow-lists: a model must pass the key's own,
// its team's and its org's; an unknown team admits none; a runtime team never
// shadows a configured one; a changed team is another object.
import { ConfigError, validateConfig } from '../../../src/config/load';
import { gatewayConfigCheck } from '../../../src/gateway';
import { principalOf } from '../../../src/auth/keys';
import { Teams } from '../../../src/teams/teams';
import type { StoredTeam } from '../../../src/teams/stored-team';

const DIGEST = 'a'.repeat(64);
const at = '2026-01-01T00:00:00.000Z';
const stored = (name: string, org: string, models?: string[]): StoredTeam => ({ name, entry: { org, ...(models && { models }) }, createdAt: at, updatedAt: at });

function problemsOf(config: Record<string, unknown>): string[] {
  try {
    validateConfig(config, '(inline)', {}, gatewayConfigCheck());
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('the config was accepted');
}

describe('teams in the config', () => {
  it('names every problem with its path: an unknown team, a team of another org, an unknown org, bad names and limits', () => {
    const problems = problemsOf({
      keys: [
        { id: 'k0', sha256: DIGEST, org: 'acme', team: 'nobody' },
        { id: 'k1', sha256: 'b'.repeat(64), org: 'other', team: 'search' },
        { id: 'k2', sha256: 'c'.repeat(64), team: 'search' },
      ],
      orgs: { acme: {}, other: {} },
      teams: {
        search: { org: 'acme', limits: { tokens: 'many' } },
        lost: { org: 'nowhere', limits: { concurrency: 2 } },
        '<b>x</b>': { org: 'acme' },
      },
      plugins: [{ name: 'rate-limit' }],
    });
    expect(problems).toHaveLength(7);
    expect(problems).toEqual(expect.arrayContaining([
      'keys[0].team: unknown team "nobody"',
      'keys[1].team: team "search" belongs to org "acme", not to the key\'s org "other"',
      'keys[2].team: team "search" belongs to org "acme": give the key org "acme"',
      expect.stringMatching(/^teams\.<b>x<\/b>: a team's name must be 1-64 letters/),
      expect.stringMatching(/^teams\.lost\.limits\.concurrency: a team has no in-flight limit/),
      'teams.lost.org: unknown org "nowhere"',
      expect.stringMatching(/^teams\.search\.limits\.tokens: /),
    ]));
  });

  it('a team\'s dollar budget needs prices, and its fields need the plugin that declares them', () => {
    expect(problemsOf({ orgs: { acme: {} }, teams: { t: { org: 'acme', limits: { dollars: 5 } } }, plugins: [{ name: 'rate-limit' }] }))
      .toEqual([expect.stringMatching(/^teams\.t\.limits\.dollars: a dollar budget needs prices/)]);
    expect(problemsOf({ orgs: { acme: {} }, teams: { t: { org: 'acme', limits: { tokens: 5 } } } }))
      .toEqual([expect.stringMatching(/^teams\.t\.limits\.tokens: tokens needs the rate-limit plugin/)]);
  });

  it('accepts teams whose keys are of their org', () => {
    const config = validateConfig({ keys: [{ id: 'k', sha256: DIGEST, org: 'acme', team: 'search' }], orgs: { acme: { models: ['m-*'] } }, teams: { search: { org: 'acme', models: ['m-1', 'x'], limits: { tokens: 100 } } }, plugins: [{ name: 'rate-limit' }] }, '(inline)', {}, gatewayConfigCheck());
    expect(config.teams.search).toEqual({ org: 'acme', models: ['m-1', 'x'], limits: { tokens: 100 } });
  });
});

describe('the teams in force', () => {
  const teams = new Teams();
  teams.applyConfig({ orgs: { acme: { models: ['m-*', 'shared'] }, open: {} }, teams: { search: { org: 'acme', models: ['m-1', 'shared', 'x'] } } });

  it('a key may use a model its own list, its team\'s and its org\'s all admit', () => {
    const p = principalOf('k', { org: 'acme', team: 'search', models: ['m-1', 'm-2', 'x'] }, undefined, teams);
    expect(['m-1', 'm-2', 'x', 'shared', 'y'].filter((m) => p.mayUse(m))).toEqual(['m-1']);
    expect(p.anyModel).toBe(false);
    const wide = principalOf('w', { org: 'open' }, undefined, teams);
    expect(wide.mayUse('anything')).toBe(true);
    expect(wide.anyModel).toBe(true);
    const orgOnly = principalOf('o', { org: 'acme' }, undefined, teams);
    expect(['m-9', 'shared', 'x'].filter((m) => orgOnly.mayUse(m))).toEqual(['m-9', 'shared']);
  });

  it('a key of a team this process does not know may use nothing; it may once the team arrives, and not after it goes', () => {
    const p = principalOf('k', { org: 'open', team: 'late' }, undefined, teams);
    expect(p.mayUse('m-1')).toBe(false);
    expect(p.anyModel).toBe(false);
    expect(teams.put(stored('late', 'open'))).toBe(true);
    expect(p.mayUse('m-1')).toBe(true);
    expect(p.anyModel).toBe(true);
    expect(teams.remove('late')).toBe(true);
    expect(p.mayUse('m-1')).toBe(false);
  });

  it('a reload keeps an unchanged configured team\'s object, and makes a changed one anew', () => {
    const reloaded = new Teams();
    const config = (tokens: number) => ({ orgs: { acme: {} }, teams: { a: { org: 'acme', limits: { tokens } }, b: { org: 'acme' } } });
    reloaded.applyConfig(config(10));
    const [a, b] = [reloaded.get('a'), reloaded.get('b')];
    reloaded.applyConfig(config(20));
    expect(reloaded.get('b')).toBe(b);
    expect(reloaded.get('a')).not.toBe(a);
    expect(reloaded.get('a')?.limits).toEqual({ tokens: 20 });
    reloaded.applyConfig({ orgs: { acme: {} }, teams: {} });
    expect(reloaded.get('a')).toBeUndefined();
  });

  it('a runtime team never shadows a configured one; a repeat keeps the object, a change makes another', () => {
    teams.put(stored('search', 'open'));
    expect(teams.get('search')?.org).toBe('acme');
    teams.put(stored('rt', 'open', ['a']));
    const first = teams.get('rt');
    expect(teams.put(stored('rt', 'open', ['a']))).toBe(false);
    expect(teams.get('rt')).toBe(first);
    expect(teams.put(stored('rt', 'open', ['b']))).toBe(true);
    expect(teams.get('rt')).not.toBe(first);
    expect(teams.replace([])).toBe(true);
    expect(teams.get('rt')).toBeUndefined();
  });
});
