// Runtime keys as pure pieces: the key index over the config's keys and the
// runtime ones (order, no shadowing, expiry, a rotation's grace period), the
// runtime set (a record that did not change keeps its principal, so policy
// compiled for it stays), what the admin API accepts for a key (each problem
// named by its field, checked as the config's keys are), the keys file, the
// admin section's checks, and the CLI's requests.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticate, buildKeyIndex, hashKey, principalOf } from '../../../src/auth/keys';
import { compileScopes } from '../../../src/admission/scopes';
import { RuntimeKeys } from '../../../src/keys/runtime-keys';
import { Teams } from '../../../src/teams/teams';
import type { StoredKey } from '../../../src/keys/stored-key';
import { KeysFileError, readKeysFile } from '../../../src/keys/file-store';
import { createInput, patchInput, rotateInput, type KeyRules } from '../../../src/admin/key-input';
import { ConfigError, validateConfig } from '../../../src/config/load';
import { gatewayConfigCheck } from '../../../src/gateway';
import { PluginRegistry } from '../../../src/pipeline/registry';
import { builtinPlugins } from '../../../plugins';
import { adminRequest } from '../../../src/cli/admin-keys';
import { GatewayError } from '../../../src/contract/errors';
import { rejection } from '../../support/rejection';

const T0 = '2025-01-01T00:00:00.000Z';
const later = (ms: number): string => new Date(Date.now() + ms).toISOString();
const record = (id: string, key: string, extra: Partial<StoredKey> = {}): StoredKey => ({ id, sha256: hashKey(key), entry: {}, createdAt: T0, updatedAt: T0, ...extra });

describe('the key index with runtime keys', () => {
  const runtime = new RuntimeKeys();
  const index = buildKeyIndex([{ id: 'file', sha256: hashKey('sk-file') }], runtime);

  it('finds a config key first, then a runtime one; never a runtime key whose id the config holds', () => {
    runtime.replace([record('late', 'sk-late', { entry: { org: 'acme', limits: { requests: 5 } } }), record('file', 'sk-shadow')]);
    expect(authenticate(index, 'Bearer sk-file').id).toBe('file');
    expect(authenticate(index, 'Bearer sk-late')).toMatchObject({ id: 'late', org: 'acme', entry: { limits: { requests: 5 } } });
    rejection((h: string) => authenticate(index, h), 'Bearer sk-shadow', 'unauthorized');
  });

  it('refuses a key past its expiresAt, saying so and when', () => {
    runtime.replace([record('old', 'sk-old', { expiresAt: '2020-01-01T00:00:00.000Z' }), record('new', 'sk-new', { expiresAt: later(60_000) })]);
    const err = rejection((h: string) => authenticate(index, h), 'Bearer sk-old', 'unauthorized');
    expect(err.message).toMatch(/expired at 2020-01-01T00:00:00\.000Z/);
    expect(authenticate(index, 'Bearer sk-new').id).toBe('new');
  });

  it('keeps a rotated key\'s old secret until its grace period ends, then says it was rotated', () => {
    runtime.replace([
      record('r1', 'sk-r1-new', { previous: { sha256: hashKey('sk-r1-old'), until: later(60_000) } }),
      record('r2', 'sk-r2-new', { previous: { sha256: hashKey('sk-r2-old'), until: '2020-01-01T00:00:00.000Z' } }),
    ]);
    expect(authenticate(index, 'Bearer sk-r1-old')).toBe(authenticate(index, 'Bearer sk-r1-new'));
    expect(rejection((h: string) => authenticate(index, h), 'Bearer sk-r2-old', 'unauthorized').message).toMatch(/rotated/);
    expect(authenticate(index, 'Bearer sk-r2-new').id).toBe('r2');
  });
});

describe('RuntimeKeys', () => {
  it('counts changes, keeps an unchanged record\'s principal, and drops every digest of a removed key', () => {
    const keys = new RuntimeKeys();
    const seen: number[] = [];
    keys.onChange(() => seen.push(keys.version));
    keys.put(record('a', 'sk-a', { previous: { sha256: hashKey('sk-a0'), until: later(60_000) } }));
    const principal = keys.get(hashKey('sk-a'))!.principal;
    keys.replace([record('a', 'sk-a', { previous: { sha256: hashKey('sk-a0'), until: keys.record('a')!.previous!.until } }), record('b', 'sk-b')]);
    expect(keys.get(hashKey('sk-a'))!.principal).toBe(principal);
    keys.put(record('a', 'sk-a', { entry: { priority: 'low' } }));
    expect(keys.get(hashKey('sk-a'))!.principal).not.toBe(principal);
    expect(keys.get(hashKey('sk-a0'))).toBeUndefined();
    keys.put(record('a', 'sk-a', { entry: { priority: 'low' } })); // the same again: no change
    keys.remove('a');
    keys.remove('a');
    expect([keys.get(hashKey('sk-a')), keys.list().map((r) => r.id)]).toEqual([undefined, ['b']]);
    expect(seen).toEqual([1, 2, 3, 4]);
  });
});

describe('in-flight limits of a key made or changed at runtime', () => {
  const config = validateConfig({ orgs: { acme: { limits: { concurrency: 9 } } }, admin: {} }, 'inline.yaml', {}, gatewayConfigCheck());
  const scopes = compileScopes(config, 'p:');

  it('are compiled once per principal, so a changed key (a new principal) gets its own', () => {
    expect(scopes.any).toBe(true); // an admin section may bring limits without a reload
    const first = principalOf('k', { org: 'acme', limits: { concurrency: 2 }, priority: 'high' });
    expect(scopes.keyLimits(first)).toBe(scopes.keyLimits(first));
    expect(scopes.keyLimits(first).limits.map((l) => [l.scope, l.limit, l.key])).toEqual([['key', 2, 'p:{key:k}:inflight'], ['org', 9, 'p:{org:acme}:inflight']]);
    expect(scopes.keyLimits(first).rank).toBe(0);
    const changed = principalOf('k', { limits: { concurrency: 5 } });
    expect(scopes.keyLimits(changed)).toEqual({ limits: [expect.objectContaining({ scope: 'key', limit: 5 })], rank: 1 });
  });
});

describe('what the admin API accepts for a key', () => {
  const loaded = {
    config: validateConfig({ orgs: { acme: {} }, plugins: [{ name: 'rate-limit' }] }, 'inline.yaml', {}, gatewayConfigCheck()),
    file: join(process.cwd(), 'test', 'inline.yaml'),
  };
  const rules: KeyRules = { loaded, registry: new PluginRegistry(builtinPlugins), teams: new Teams() };
  const paramOf = (run: () => unknown): string | null => {
    try {
      run();
    } catch (err) {
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).reason).toBe('invalid_request');
      return (err as GatewayError).param;
    }
    return 'accepted';
  };

  it('takes a key\'s fields as the config does, with the plugins\' own limits', () => {
    const at = later(86_400_000);
    expect(createInput({ id: 'k', org: 'acme', models: ['m-*'], limits: { requests: '60', concurrency: 2 }, priority: 'high', expiresAt: at }, rules)).toEqual({
      id: 'k', entry: { org: 'acme', models: ['m-*'], limits: { requests: '60', concurrency: 2 }, priority: 'high' }, expiresAt: at,
    });
  });

  it.each([
    [{}, 'id'],
    [{ id: '' }, 'id'],
    [{ id: 'k', org: 'nobody' }, 'org'],
    [{ id: 'k', models: [1] }, 'models[0]'],
    [{ id: 'k', limits: { requests: 0 } }, 'limits.requests'],
    [{ id: 'k', limits: { windowSeconds: 'soon' } }, 'limits.windowSeconds'],
    [{ id: 'k', limits: { concurrency: 0 } }, 'limits.concurrency'],
    [{ id: 'k', limits: { nope: 1 } }, 'limits.nope'],
    [{ id: 'k', priority: 'top' }, 'priority'],
    [{ id: 'k', expiresAt: 12 }, 'expiresAt'],
    [{ id: 'k', expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
    [{ id: 'k', expiresAt: '2999-01-01' }, 'expiresAt'],
    [{ id: 'k', sha256: 'a'.repeat(64) }, 'sha256'],
    [{ id: 'k', extra: true }, 'extra'],
  ])('refuses %j naming %s', (body, param) => {
    expect(paramOf(() => createInput(body, rules))).toBe(param);
  });

  it('refuses a budget of a plugin the config does not run, as the config would', () => {
    const bare = { ...rules, loaded: { ...loaded, config: validateConfig({}, 'inline.yaml', {}, gatewayConfigCheck()) } };
    expect(paramOf(() => createInput({ id: 'k', limits: { requests: 5 } }, bare))).toBe('limits.requests');
  });

  it('changes the fields given, clears those set to null, keeps the id and the rest', () => {
    const current = record('k', 'sk-k', { entry: { org: 'acme', models: ['m-*'], limits: { requests: 5 } }, expiresAt: later(60_000) });
    expect(patchInput({ limits: { tokens: 100 }, models: null, expiresAt: null }, current, rules)).toEqual({ entry: { org: 'acme', limits: { tokens: 100 } } });
    expect(patchInput({ priority: 'low' }, current, rules)).toEqual({ entry: { ...current.entry, priority: 'low' }, expiresAt: current.expiresAt });
    expect(paramOf(() => patchInput({ id: 'other' }, current, rules))).toBe('id');
    expect(paramOf(() => patchInput({ org: 'nobody' }, current, rules))).toBe('org');
    expect(paramOf(() => patchInput({}, current, rules))).toBeNull();
  });

  it('takes a rotation\'s grace period, 3600 s unless given, within 0 and 30 days', () => {
    expect([rotateInput(undefined), rotateInput({ graceSeconds: 0 }), rotateInput({ graceSeconds: '60' })]).toEqual([{ graceSeconds: 3600 }, { graceSeconds: 0 }, { graceSeconds: 60 }]);
    for (const body of [{ graceSeconds: -1 }, { graceSeconds: 30 * 86_400 + 1 }, { graceSeconds: 1.5 }]) expect(paramOf(() => rotateInput(body))).toBe('graceSeconds');
    expect(paramOf(() => rotateInput({ grace: 1 }))).toBe('grace');
  });
});

describe('the keys file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-keys-unit-'));
  const write = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads none from a file that does not exist, and the records of one that does', () => {
    expect(readKeysFile(join(dir, 'absent.json'))).toEqual({ keys: [], teams: [] });
    const r = record('a', 'sk-a');
    expect(readKeysFile(write('one.json', JSON.stringify({ keys: [r] })))).toEqual({ keys: [r], teams: [] });
  });

  it.each([['not valid JSON', '{'], ['not {"keys": [...]}', '[]'], ['keys[1] is not a runtime key record', JSON.stringify({ keys: [record('a', 'sk-a'), { id: 'b' }] })]])('refuses a file that is %s', (why, text) => {
    expect(() => readKeysFile(write('bad.json', text))).toThrow(KeysFileError);
    expect(() => readKeysFile(write('bad.json', text))).toThrow(why);
  });
});

describe('the admin section of the config', () => {
  const problemsOf = (raw: Record<string, unknown>): string[] => {
    try {
      validateConfig(raw, 'inline.yaml', {}, gatewayConfigCheck());
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };

  it('needs an admin key for a listener, and never a gateway key\'s digest', () => {
    const digest = hashKey('sk-both');
    expect(problemsOf({ admin: {} })).toEqual([]);
    expect(problemsOf({ admin: { port: 9465 } })).toEqual([expect.stringMatching(/^admin\.keys: the admin listener \(admin\.port\) needs at least one/)]);
    expect(problemsOf({ admin: { port: 9465, keys: [digest.toUpperCase()] }, keys: [{ id: 'k', sha256: digest }] })).toEqual(['admin.keys[0]: the digest of a gateway key (keys[0]); an admin key must be a key of its own']);
    expect(problemsOf({ admin: { keys: ['nope'], port: 70000, colour: 1 } })).toEqual(expect.arrayContaining([expect.stringMatching(/^admin\.keys\[0\]: /), expect.stringMatching(/^admin\.port: /), 'admin.colour: unknown field']));
  });
});

describe('the CLI\'s admin requests', () => {
  it.each([
    [['create', '--id', 'k', '--org', 'acme', '--models', 'a,b', '--limits', '{"requests":5}', '--priority', 'low', '--expires-at', 'T'], { method: 'POST', path: '/admin/keys', body: { id: 'k', org: 'acme', models: ['a', 'b'], limits: { requests: 5 }, priority: 'low', expiresAt: 'T' } }],
    [['list'], { method: 'GET', path: '/admin/keys' }],
    [['show', 'a/b'], { method: 'GET', path: '/admin/keys/a%2Fb' }],
    [['update', 'k', '--limits', '{"tokens":9}', '--clear', 'org,expiresAt'], { method: 'PATCH', path: '/admin/keys/k', body: { limits: { tokens: 9 }, org: null, expiresAt: null } }],
    [['revoke', 'k'], { method: 'DELETE', path: '/admin/keys/k' }],
    [['rotate', 'k', '--grace', '60'], { method: 'POST', path: '/admin/keys/k/rotate', body: { graceSeconds: 60 } }],
  ])('keys %j', (args, expected) => {
    const [verb, ...rest] = args;
    expect(adminRequest(verb, rest)).toEqual(expected);
  });

  it('refuses what it cannot send', () => {
    expect(() => adminRequest('create', ['--org', 'acme'])).toThrow('--id NAME is required');
    expect(() => adminRequest('create', ['--id', 'k', '--limits', '{requests}'])).toThrow(/--limits must be JSON/);
    expect(() => adminRequest('show', [])).toThrow(/takes one key id/);
  });
});
