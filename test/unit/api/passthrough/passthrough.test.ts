// Pass-through routes as pure functions: the config's problems, which route a
// method and path reach, and the strings of a body the policy reads.
import { ConfigError, validateConfig } from '../../../../src/config/load';
import { gatewayConfigCheck } from '../../../../src/gateway';
import { compilePassthrough, shadowedEndpoints } from '../../../../src/api/passthrough/routes';
import { jsonStrings } from '../../../../src/api/passthrough/json-strings';

function problemsOf(config: Record<string, unknown>): string[] {
  try {
    validateConfig(config, 'passthrough.yaml', {}, gatewayConfigCheck());
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems].sort();
  }
  throw new Error('expected a ConfigError');
}

const table = (passthrough: unknown[]) =>
  compilePassthrough(validateConfig({ upstreams: { b: { url: 'http://127.0.0.1:9/v1' } }, passthrough }));

describe('pass-through config', () => {
  it('names every problem with its path, schema and cross-checks in one round', () => {
    expect(problemsOf({
      upstreams: { b: { url: 'http://127.0.0.1:9/v1' }, d: { format: 'demo' } },
      passthrough: [
        { path: '/v1/models/*', upstream: 'b' },
        { path: '/v1/audio/*', upstream: 'b' },
        { path: '/v1/audio/speech', upstream: 'b' },
        { path: '/v1/x', upstream: 'nope' },
        { path: '/v1/y', upstream: 'd' },
        { path: '/v3/z', upstream: 'b', methods: ['TRACE'] },
        { path: '/v1/chat/*', upstream: 'b' },
        { path: '/v1/a/../b', upstream: 'b', bodyLimit: 'lots', extra: 1 },
      ],
    })).toEqual([
      expect.stringMatching(/^passthrough\[0\]\.path: .*\/v1\/models\/\{id\}/),
      expect.stringMatching(/^passthrough\[2\]\.path: never reached: passthrough\[1\] comes first/),
      'passthrough[3].upstream: unknown upstream "nope"',
      expect.stringMatching(/^passthrough\[4\]\.upstream: "d" is the built-in demo backend/),
      expect.stringMatching(/^passthrough\[5\]\.methods\[0\]: /),
      expect.stringMatching(/^passthrough\[5\]\.path: must start with \/v1\/ or \/v2\//),
      expect.stringMatching(/^passthrough\[6\]\.path: .*\/v1\/chat\/completions/),
      expect.stringMatching(/^passthrough\[7\]\.bodyLimit: /),
      'passthrough[7].extra: unknown field',
      expect.stringMatching(/^passthrough\[7\]\.path: /),
    ]);
  });

  it('lets a later route serve what earlier ones do not: other methods, a path beside them', () => {
    const config = (passthrough: unknown[]) => ({ upstreams: { b: { url: 'http://127.0.0.1:9/v1' } }, passthrough });
    expect(() => validateConfig(config([
      { path: '/v1/audio/*', upstream: 'b', methods: ['POST'] },
      { path: '/v1/audio/voices', upstream: 'b', methods: ['GET'] },
      { path: '/v1/audiobooks', upstream: 'b' },
      { path: '/v2/audio/*', upstream: 'b' },
    ]), 'x.yaml', {}, gatewayConfigCheck())).not.toThrow();
  });
});

describe('pass-through matching', () => {
  const t = table([
    { path: '/v1/embeddings', upstream: 'b' },
    { path: '/v1/audio/*', upstream: 'b', methods: ['POST'], model: 'whisper-1' },
    { path: '/v1/audio/voices', upstream: 'b', methods: ['GET'] },
  ]);

  it('matches exact paths and paths below a wildcard, the query aside; first route wins', () => {
    expect(t.match('POST', '/v1/embeddings?x=1')).toEqual({ route: expect.objectContaining({ index: 0, version: 'v1', upstream: 'b', bodyLimit: 1024 * 1024 }) });
    expect(t.match('POST', '/v1/audio/speech')).toEqual({ route: expect.objectContaining({ index: 1, model: 'whisper-1' }) });
    expect(t.match('POST', '/v1/audio/voices')).toEqual({ route: expect.objectContaining({ index: 1 }) });
    expect(t.match('GET', '/v1/audio/voices')).toEqual({ route: expect.objectContaining({ index: 2 }) });
    expect(t.match('HEAD', '/v1/audio/voices')).toEqual({ route: expect.objectContaining({ index: 2 }) });
  });

  it('names the methods a path allows when none matches, and nothing for an unknown path', () => {
    expect(t.match('GET', '/v1/embeddings')).toEqual({ allow: 'POST' });
    expect(t.match('DELETE', '/v1/audio/voices')).toEqual({ allow: 'POST, GET, HEAD' });
    for (const url of ['/v1/embeddings/', '/v1/audio', '/v1/audio/', '/v1/audio/a//b', '/v1/audio/../x', '/v1/audio/./x', '/v1/audio/%2e%2e', '/v1/audio/a%2Fb', '/v2/embeddings']) {
      expect([url, t.match('POST', url)]).toEqual([url, undefined]);
    }
  });
});

describe('jsonStrings', () => {
  it('collects every string value and object key, in order, at any depth', () => {
    expect(jsonStrings({ model: 'm', input: ['a', { b: [['c', 1, null, true]] }], n: 2 })).toEqual(['model', 'm', 'input', 'a', 'b', 'c', 'n']);
  });

  it('refuses a value nested deeper than the bound, without recursion', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 10; i++) deep = [deep];
    expect(jsonStrings(deep, 10)).toEqual(['x']);
    expect(() => jsonStrings([deep], 10)).toThrow(expect.objectContaining({ reason: 'invalid_json' }));
  });
});

describe('shadowedEndpoints', () => {
  const routes = (passthrough: unknown[]) => validateConfig({ upstreams: { b: { url: 'http://127.0.0.1:9/v1' } }, passthrough }).passthrough;

  it('names each input and audio endpoint a route takes POST on, with the first such route', () => {
    expect(shadowedEndpoints(routes([
      { path: '/v1/audio/*', upstream: 'b' },
      { path: '/v1/embeddings', upstream: 'b' },
      { path: '/v2/rerank', upstream: 'b', methods: ['POST', 'GET'] },
      { path: '/v1/embeddings', upstream: 'b', methods: ['POST', 'PUT'] },
      { path: '/v2/audio/speech', upstream: 'b', methods: ['GET'] },
    ]))).toEqual([
      { index: 1, path: '/v1/embeddings' },
      { index: 0, path: '/v1/audio/transcriptions' }, { index: 0, path: '/v1/audio/translations' }, { index: 0, path: '/v1/audio/speech' },
      { index: 2, path: '/v2/rerank' },
    ]);
  });

  it('leaves out routes of other methods and other paths', () => {
    expect(shadowedEndpoints(routes([{ path: '/v1/embeddings', upstream: 'b', methods: ['GET'] }, { path: '/v1/completions', upstream: 'b' }, { path: '/v1/rerank/*', upstream: 'b' }]))).toEqual([]);
  });
});
