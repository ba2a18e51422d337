import { createHash } from 'node:crypto';
import { authenticate, authorizationOf, authorizeModel, buildKeyIndex, hashKey } from '../../../src/auth/keys';
import { rejection } from '../../support/rejection';

const KEY = 'sk-test-0123456789';
const index = buildKeyIndex([
  { id: 'ci-bot', sha256: hashKey(KEY), org: 'acme', models: ['chat-*'] },
  { id: 'admin', sha256: hashKey('sk-admin') },
]);

describe('hashKey', () => {
  it('is the hex SHA-256 of the key', () => {
    expect(hashKey(KEY)).toBe(createHash('sha256').update(KEY).digest('hex'));
    expect(hashKey('sk-sluice-demo')).toBe('1c590839af894cf25f9a5fe06929af05b377f60efbe55508ef93d251887b9213');
  });
});

describe('authenticate', () => {
  it('finds the key behind a bearer header, any case of "Bearer"', () => {
    expect(authenticate(index, `Bearer ${KEY}`)).toMatchObject({ id: 'ci-bot', org: 'acme' });
    expect(authenticate(index, `bearer ${KEY}`).id).toBe('ci-bot');
    expect(authenticate(index, 'Bearer sk-admin')).toMatchObject({ id: 'admin', org: null });
  });

  it.each([undefined, '', 'Bearer', 'Bearer ', `Basic ${KEY}`, KEY, `Bearer ${KEY} extra`, `Token ${KEY}`])('refuses the header %p as unauthorized', (header) => {
    const err = rejection((h: string | undefined) => authenticate(index, h), header, 'unauthorized');
    expect(err.status).toBe(401);
  });

  it('refuses an unknown key, and never echoes the key', () => {
    const err = rejection((h: string) => authenticate(index, h), 'Bearer sk-wrong-key', 'unauthorized');
    expect(err.message).not.toContain('sk-wrong-key');
  });
});

describe('authorizationOf', () => {
  const request = (...raw: string[]) => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < raw.length; i += 2) headers[raw[i].toLowerCase()] ??= raw[i + 1]; // as Node does: the first one wins
    return { headers, rawHeaders: raw };
  };

  it('gives the one Authorization header, or none', () => {
    expect(authorizationOf(request('Host', 'x', 'Authorization', `Bearer ${KEY}`))).toBe(`Bearer ${KEY}`);
    expect(authorizationOf(request('host', 'x', 'content-type', 'application/json'))).toBeUndefined();
  });

  it('refuses two or more, in any case, with 401 saying to send one', () => {
    for (const second of ['authorization', 'AUTHORIZATION', 'Authorization']) {
      const err = rejection(authorizationOf, request('Authorization', `Bearer ${KEY}`, 'X-Other', 'y', second, 'Bearer sk-other'), 'unauthorized');
      expect(err.message).toMatch(/Send exactly one/);
      expect(err.status).toBe(401);
    }
    expect(rejection(authorizationOf, request('authorization', '', 'authorization', `Bearer ${KEY}`), 'unauthorized').message).toMatch(/More than one/);
  });
});

describe('authorizeModel', () => {
  it('lets a key use models its allow-list matches, and any model without a list', () => {
    expect(() => authorizeModel(authenticate(index, `Bearer ${KEY}`), 'chat-large')).not.toThrow();
    expect(() => authorizeModel(authenticate(index, 'Bearer sk-admin'), 'anything')).not.toThrow();
  });

  it('refuses other models with model_not_allowed 403 on param model', () => {
    const principal = authenticate(index, `Bearer ${KEY}`);
    const err = rejection((m: string) => authorizeModel(principal, m), 'img-1', 'model_not_allowed');
    expect(err).toMatchObject({ status: 403, param: 'model' });
  });
});
