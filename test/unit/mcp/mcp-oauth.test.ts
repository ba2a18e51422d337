// The pure parts of MCP identity: what a verification error means (a token's
// fault, or a key set that could not be had), the resource and metadata URLs
// of each endpoint (RFC 9728 §3.1), the challenge's form (RFC 6750 §3), which
// endpoint a metadata path is about, and mcp.oauth's checks at load.
import { errors } from 'jose';
import { ConfigError, validateConfig } from '../../../src/config/load';
import { MCP_SERVER_NAME } from '../../../src/config/schema';
import { tokenFault } from '../../../src/mcp/oauth/access-token';
import { bearerChallenge, canonicalResource, metadataSubject, resourceUrls } from '../../../src/mcp/oauth/resource';
import { VerifiedTokens } from '../../../src/mcp/oauth/verified-tokens';
import { principalOf } from '../../../src/auth/keys';

describe('tokenFault', () => {
  const claim = (name: string) => new errors.JWTClaimValidationFailed('x', {}, name, 'check_failed');
  it.each([
    [new errors.JWTExpired('x', {}), 'expired'],
    [claim('nbf'), 'not_yet_valid'],
    [claim('iss'), 'issuer'],
    [claim('aud'), 'audience'],
    [claim('sub'), 'claims'],
    [claim('exp'), 'claims'],
    [new errors.JWSSignatureVerificationFailed(), 'signature'],
    [new errors.JWKSNoMatchingKey(), 'signature'],
    [new errors.JWKSMultipleMatchingKeys(), 'signature'],
    [new errors.JOSEAlgNotAllowed('x'), 'algorithm'],
    [new errors.JOSENotSupported('x'), 'algorithm'],
    [new errors.JWSInvalid('x'), 'malformed'],
    [new errors.JWTInvalid('x'), 'malformed'],
    [new errors.JWKSTimeout(), 'unavailable'],
    [new errors.JWKSInvalid('x'), 'unavailable'],
    [new errors.JOSEError('Expected 200 OK from the JSON Web Key Set HTTP response'), 'unavailable'],
    [new TypeError('fetch failed'), 'unavailable'],
  ])('%p is %s', (err, fault) => {
    expect(tokenFault(err)).toBe(fault);
  });
});

describe('resource URLs', () => {
  it('puts the resource in canonical form: lowercase host, no default port, no trailing slash', () => {
    expect(canonicalResource('HTTPS://GW.Example.com:443/mcp/')).toBe('https://gw.example.com/mcp');
    expect(canonicalResource('http://127.0.0.1:8080/mcp')).toBe('http://127.0.0.1:8080/mcp');
  });

  it('inserts the well-known path between the origin and each endpoint\'s path', () => {
    expect(resourceUrls('https://gw.example.com/mcp')).toEqual({ resource: 'https://gw.example.com/mcp', metadata: 'https://gw.example.com/.well-known/oauth-protected-resource/mcp' });
    expect(resourceUrls('https://gw.example.com/sluice/mcp', 'github')).toEqual({
      resource: 'https://gw.example.com/sluice/mcp/github',
      metadata: 'https://gw.example.com/.well-known/oauth-protected-resource/sluice/mcp/github',
    });
  });

  it('writes the challenge with an error only when a token was refused', () => {
    expect(bearerChallenge('https://m', undefined)).toBe('Bearer resource_metadata="https://m"');
    expect(bearerChallenge('https://m', 'a b')).toBe('Bearer resource_metadata="https://m", scope="a b"');
    expect(bearerChallenge('https://m', '', { error: 'invalid_token', description: 'Expired.' })).toBe('Bearer resource_metadata="https://m", error="invalid_token", error_description="Expired."');
  });

  it.each([
    ['', undefined], ['/', undefined], ['/mcp', undefined], ['/sluice/mcp', undefined],
    ['/mcp/github', 'github'], ['/sluice/mcp/github', 'github'],
    ['/mcpx', null], ['/mcp/', null], ['/mcp/Git', null], ['/mcp/a/b', null], ['/other', null], ['/mcp/%2e%2e', null],
  ])('reads the metadata path %p as the endpoint %p', (path, subject) => {
    expect(metadataSubject(path, '/sluice/mcp', MCP_SERVER_NAME)).toBe(subject);
  });
});

describe('mcp.oauth at load', () => {
  const problemsOf = (oauth: Record<string, unknown>): string[] => {
    try {
      validateConfig({ mcp: { servers: {}, oauth: { issuer: 'https://login.example.com', jwksUrl: 'https://login.example.com/jwks', resource: 'https://gw.example.com/mcp', ...oauth } } }, '(inline)', {});
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
  };

  it('takes a minimal section, with its defaults', () => {
    expect(problemsOf({})).toEqual([]);
    const config = validateConfig({ mcp: { oauth: { issuer: 'http://127.0.0.1:9000', jwksUrl: 'http://localhost:9000/jwks', resource: 'http://[::1]:8080/mcp' } } }, '(inline)', {});
    expect(config.mcp?.oauth).toMatchObject({ algorithms: ['RS256', 'ES256'], clockToleranceSeconds: 30, orgClaim: 'org', scopes: {}, jwksTimeoutMs: 5000 });
  });

  it.each([
    [{ issuer: 'http://login.example.com' }, /^mcp\.oauth\.issuer: must be an https:\/\/ URL/],
    [{ jwksUrl: 'ftp://login.example.com/jwks' }, /^mcp\.oauth\.jwksUrl: /],
    [{ resource: 'https://gw.example.com/mcp?x=1' }, /^mcp\.oauth\.resource: must be the URL clients use/],
    [{ resource: 'https://gw.example.com/' }, /^mcp\.oauth\.resource: /],
    [{ algorithms: ['HS256'] }, /^mcp\.oauth\.algorithms\[0\]: /],
    [{ algorithms: ['none'] }, /^mcp\.oauth\.algorithms\[0\]: /],
    [{ scopes: { 'has space': { servers: ['*'] } } }, /^mcp\.oauth\.scopes\.has space: .*OAuth scope/],
    [{ scopes: { ok: { servers: ['*'], tools: ['no-slash'] } } }, /^mcp\.oauth\.scopes\.ok\.tools\[0\]: /],
    [{ clockToleranceSeconds: 3600 }, /^mcp\.oauth\.clockToleranceSeconds: /],
    [{ audience: 'x' }, /^mcp\.oauth\.audience: unknown field/],
  ])('refuses %p, naming the field', (oauth, problem) => {
    expect(problemsOf(oauth)).toEqual([expect.stringMatching(problem)]);
  });
});

describe('mcp.oauth.scopes against mcp.servers', () => {
  it('stops the start on a scope that names a server mcp.servers does not hold, in a valid config or one that failed the schema', () => {
    const oauth = { issuer: 'https://login.example.com', jwksUrl: 'https://login.example.com/jwks', resource: 'https://gw.example.com/mcp' };
    const scopes = { 'mcp:gh': { servers: ['githb', 'git*'], tools: ['githb/*', 'files/read'] } };
    const problems = (extra: Record<string, unknown>) => {
      try {
        validateConfig({ mcp: { servers: { files: { url: 'https://files.example.com/mcp' } }, oauth: { ...oauth, scopes, ...extra } } }, '(inline)', {});
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    const expected = [
      'mcp.oauth.scopes.mcp:gh.servers[0]: no MCP server "githb" under mcp.servers',
      'mcp.oauth.scopes.mcp:gh.tools[0]: no MCP server "githb" under mcp.servers',
    ];
    expect(problems({})).toEqual(expected);
    expect(problems({ issuer: 'ftp://x' })).toEqual([expect.stringMatching(/^mcp\.oauth\.issuer: /), ...expected]);
  });
});

describe('VerifiedTokens', () => {
  const alice = principalOf('oauth:alice', { models: [] });
  const exp = 1_000_000;

  it('gives a token\'s principal on its endpoint until its exp, then forgets it', () => {
    const kept = new VerifiedTokens();
    kept.set('files', 'a.b.c', alice, exp);
    expect(kept.get('files', 'a.b.c', exp * 1000 - 1)).toBe(alice);
    expect(kept.get('json', 'a.b.c', exp * 1000 - 1)).toBeUndefined();
    expect(kept.get('', 'a.b.c', exp * 1000 - 1)).toBeUndefined();
    expect(kept.get('files', 'a.b.c', exp * 1000)).toBeUndefined();
    expect(kept.get('files', 'a.b.c', 0)).toBeUndefined();
  });

  it('keeps no token longer than 4096 characters, and no more than 4096 tokens', () => {
    const kept = new VerifiedTokens();
    kept.set('files', `a.${'b'.repeat(4096)}.c`, alice, exp);
    expect(kept.get('files', `a.${'b'.repeat(4096)}.c`, 0)).toBeUndefined();
    for (let i = 0; i <= 4096; i++) kept.set('files', `t.${i}.s`, alice, exp);
    expect(kept.get('files', 't.0.s', 0)).toBeUndefined();
    expect(kept.get('files', 't.4096.s', 0)).toBe(alice);
  });
});
