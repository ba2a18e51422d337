import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, defaultConfigPath, loadConfigFile, parseConfigText, validateConfig } from '../../../src/config/load';
import { interpolateEnv } from '../../../src/config/interpolate';
import type { ConfigView } from '../../../src/config/schema';

const DIGEST = 'a'.repeat(64);

const VALID = `
server: { host: 127.0.0.1, port: 8080, bodyLimit: 1mb }
keys:
  - { id: ci-bot, sha256: "${DIGEST}", org: acme, models: ["chat-*"] }
orgs:
  acme: {}
upstreams:
  vllm: { url: "\${VLLM_URL:-http://127.0.0.1:8000/v1}", format: openai, headers: { authorization: "Bearer \${VLLM_KEY}" }, timeoutMs: 60000 }
routes:
  - { model: "chat-*", upstream: vllm, upstreamModel: "Qwen/Qwen2.5-7B-Instruct", endpoints: [chat], versions: [v1, v2] }
plugins:
  - { name: content-filter, terms: ["forbidden phrase"] }
`;

/** The problems a ConfigError lists, or a failure if nothing was thrown. */
function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('interpolateEnv', () => {
  it('replaces ${VAR} and ${VAR:-default} inside any string value, at any depth', () => {
    const problems: string[] = [];
    const out = interpolateEnv({ a: 'x-${A}-y', list: ['${B:-dflt}', 3, true, null] }, { A: 'one' }, problems);
    expect(out).toEqual({ a: 'x-one-y', list: ['dflt', 3, true, null] });
    expect(problems).toEqual([]);
  });

  it('prefers the environment over the default, and allows an empty default', () => {
    const problems: string[] = [];
    expect(interpolateEnv('${A:-no}|${B:-}', { A: 'yes' }, problems)).toBe('yes|');
    expect(problems).toEqual([]);
  });

  it('reports each missing variable without a default with the path of its value', () => {
    const problems: string[] = [];
    interpolateEnv({ upstreams: { vllm: { headers: { authorization: 'Bearer ${VLLM_KEY}' } } }, routes: [{ model: '${M}' }] }, {}, problems);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^upstreams\.vllm\.headers\.authorization: .*VLLM_KEY/);
    expect(problems[1]).toMatch(/^routes\[0\]\.model: .*\bM\b/);
  });

  it('does not read variables from keys or expand text that is not a placeholder', () => {
    const problems: string[] = [];
    expect(interpolateEnv({ '${A}': '$A and {A} and $${A}' }, { A: 'x' }, problems)).toEqual({ '${A}': '$A and {A} and $x' });
  });
});

describe('parseConfigText / validateConfig', () => {
  it('accepts the issue\'s example and fills the defaults', () => {
    const config = parseConfigText(VALID, '(inline)', { VLLM_KEY: 'k' });
    expect(config.upstreams.vllm).toMatchObject({ url: 'http://127.0.0.1:8000/v1', headers: { authorization: 'Bearer k' }, format: 'openai', timeoutMs: 60000 });
    expect(config.keys[0].sha256).toBe(DIGEST);
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 8080, bodyLimit: 1024 * 1024 });
    const route = parseConfigText('upstreams: { u: { url: "http://h/v1" } }\nroutes: [{ model: m, upstream: u }]', '(inline)', {}).routes[0];
    expect(route.endpoints).toEqual(['chat', 'images']);
    expect(route.versions).toEqual(['v1', 'v2']);
    expect(route.upstreamModel).toBeUndefined();
  });

  it('stops on a missing variable and names its path', () => {
    const problems = problemsOf(() => parseConfigText(VALID, '(inline)', {}));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^upstreams\.vllm\.headers\.authorization: .*VLLM_KEY/);
  });

  it('lets PORT override server.port, and blames a PORT that is not a port on PORT, not on the file', () => {
    expect(parseConfigText(VALID, '(inline)', { VLLM_KEY: 'k', PORT: '9090' }).server.port).toBe(9090);
    expect(parseConfigText('{}', '(inline)', { PORT: '0' }).server.port).toBe(0);
    expect(parseConfigText('server: { port: 1234 }', '(inline)', { PORT: '' }).server.port).toBe(1234);
    expect(problemsOf(() => parseConfigText(VALID, '(inline)', { VLLM_KEY: 'k', PORT: 'http' }))).toEqual(['PORT (environment): must be a port number from 0 to 65535 (got "http")']);
    expect(problemsOf(() => parseConfigText(VALID, '(inline)', { VLLM_KEY: 'k', PORT: '70000' }))).toEqual([expect.stringMatching(/^PORT \(environment\): /)]);
  });

  it('allows the openai dialect only on routes to openai-format upstreams', () => {
    const problems = problemsOf(() => validateConfig({
      upstreams: { n: { url: 'http://127.0.0.1:1', format: 'native', dialect: 'openai' }, o: { url: 'http://127.0.0.1:2', dialect: 'openai' }, d: { format: 'demo' } },
      routes: [{ model: 'a', upstream: 'n' }, { model: 'b', upstream: 'd', dialect: 'openai' }, { model: 'c', upstream: 'o' }, { model: 'e', upstream: 'o', dialect: 'interface' }],
    }, '(inline)', {}));
    expect(problems).toEqual([
      expect.stringMatching(/^routes\[1\]\.dialect: .*format openai/),
      expect.stringMatching(/^upstreams\.n\.dialect: /),
    ]);
  });

  it('lists every schema problem with its path', () => {
    const problems = problemsOf(() => validateConfig({
      server: { port: 'eighty', bodyLimit: 'huge' },
      keys: [{ id: 'a b', sha256: 'abc' }],
      upstreams: { u: { url: 'ftp://x', format: 'grpc' } },
      routes: [{ model: '', upstream: 'u', endpoints: ['audio'] }],
    }, '(inline)', {}));
    const paths = problems.map((p) => p.split(':')[0]);
    expect(paths).toEqual(expect.arrayContaining([
      'server.port', 'server.bodyLimit', 'keys[0].id', 'keys[0].sha256', 'upstreams.u.url', 'upstreams.u.format', 'routes[0].model', 'routes[0].endpoints[0]',
    ]));
    expect(problems).toHaveLength(8);
  });

  it('rejects unknown fields at every level, naming the field', () => {
    const problems = problemsOf(() => validateConfig({
      sever: {},
      server: { hots: 'x', prot: 1, bodylimit: 2 },
      upstreams: { u: { url: 'http://h/v1', header: {} } },
      routes: [{ model: 'm', upstream: 'u', version: ['v1'] }],
    }, '(inline)', {}));
    expect(problems).toEqual(expect.arrayContaining([
      'sever: unknown field', 'server.hots: unknown field', 'upstreams.u.header: unknown field', 'routes[0].version: unknown field',
    ]));
    // Every unknown field of a block, not only the first.
    expect(problems.filter((p) => p.startsWith('server.'))).toEqual(['server.hots: unknown field', 'server.prot: unknown field', 'server.bodylimit: unknown field']);
  });

  it('checks a route\'s field rules: field names, never the request\'s core fields, each name in one list', () => {
    const problems = problemsOf(() => validateConfig({
      upstreams: { u: { url: 'http://h/v1' } },
      routes: [
        { model: 'a', upstream: 'u', fields: { refuse: ['messages', 'ok_name'], drop: ['has space'] } },
        { model: 'b', upstream: 'u', fields: { refuse: ['store'], drop: ['top_k', 'store'] } },
        { model: 'c', upstream: 'u', fields: { keep: ['x'] } },
      ],
    }, '(inline)', {}));
    expect(problems).toEqual([
      expect.stringMatching(/^routes\[0\]\.fields\.refuse\[0\]: must not be one of model, messages/),
      expect.stringMatching(/^routes\[0\]\.fields\.drop\[0\]: must be a request field name/),
      'routes[2].fields.keep: unknown field',
      'routes[1].fields.drop[1]: "store" is also in fields.refuse; list it in one of the two',
    ]);
    expect(validateConfig({ upstreams: { u: { url: 'http://h/v1' } }, routes: [{ model: 'a', upstream: 'u', fields: { drop: ['top_k'] } }] }, '(inline)', {}).routes[0].fields)
      .toEqual({ refuse: [], drop: ['top_k'] });
  });

  it('lists every cross-reference problem with its path', () => {
    const problems = problemsOf(() => validateConfig({
      keys: [{ id: 'k', sha256: DIGEST, org: 'nobody' }, { id: 'k', sha256: DIGEST.toUpperCase() }],
      upstreams: { vllm: { url: 'http://h/v1' }, bare: { format: 'native' } },
      routes: [{ model: 'a', upstream: 'vllm' }, { model: 'b', upstream: 'vllm' }, { model: 'c', upstream: 'vlm' }],
    }, '(inline)', {}));
    expect(problems).toEqual(expect.arrayContaining([
      'routes[2].upstream: unknown upstream "vlm"',
      'keys[0].org: unknown org "nobody"',
      expect.stringMatching(/^keys\[1\]\.id: /),
      expect.stringMatching(/^keys\[1\]\.sha256: /),
      expect.stringMatching(/^upstreams\.bare\.url: /),
    ]));
    expect(problems).toHaveLength(5);
  });

  it('reports cross-references and the extra checks too when the schema already failed, one problem per path', () => {
    const extra = jest.fn((view: ConfigView) => (view.plugins ?? []).flatMap((p, i) => (p?.name === 'bogus' ? [`plugins[${i}].name: unknown plugin "bogus"`] : [])));
    const problems = problemsOf(() => validateConfig({
      server: { port: 'eighty' },
      keys: [{ id: 'k', sha256: 'nothex', org: 'nobody' }],
      upstreams: { vllm: { url: 'ftp://h/v1' }, bare: { format: 'native', timeoutMs: -1 } },
      routes: [{ model: 'a', upstream: 'vlm', endpoints: ['audio'] }, { upstream: 'vllm' }],
      plugins: [{ name: 'bogus' }],
    }, '(inline)', {}, extra));
    expect(problems).toEqual([
      expect.stringMatching(/^server\.port: /),
      expect.stringMatching(/^keys\[0\]\.sha256: /),
      expect.stringMatching(/^upstreams\.vllm\.url: /), // the schema's word, not also "required"
      expect.stringMatching(/^upstreams\.bare\.timeoutMs: /),
      expect.stringMatching(/^routes\[0\]\.endpoints\[0\]: /),
      expect.stringMatching(/^routes\[1\]\.model: /),
      'keys[0].org: unknown org "nobody"',
      'upstreams.bare.url: required for format native (or endpoints: [{url, weight}])',
      'routes[0].upstream: unknown upstream "vlm"',
      'plugins[0].name: unknown plugin "bogus"',
    ]);
    expect(extra).toHaveBeenCalledTimes(1);
  });

  it('does not cross-check into a section that is not even a map', () => {
    const problems = problemsOf(() => validateConfig({ orgs: ['acme'], keys: [{ id: 'k', sha256: DIGEST, org: 'acme' }] }, '(inline)', {}));
    expect(problems).toEqual([expect.stringMatching(/^orgs: /)]);
  });

  it('accepts a demo upstream without url, and an org written as an empty entry', () => {
    const config = parseConfigText('orgs: { acme: }\nupstreams: { d: { format: demo } }\nroutes: [{ model: demo-chat, upstream: d }]', '(inline)', {});
    expect(config.orgs.acme).toEqual({});
    expect(config.upstreams.d.url).toBeUndefined();
  });

  it('rejects text that is not YAML, naming the line', () => {
    const problems = problemsOf(() => parseConfigText('server:\n  port: [1,\n', '(inline)', {}));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/line \d+/);
  });

  it('treats an empty file as all defaults', () => {
    const config = parseConfigText('', '(inline)', {});
    expect(config).toMatchObject({ keys: [], routes: [], plugins: [], server: { port: 8080, host: '127.0.0.1', workers: 1 } });
  });

  it('takes server.workers as a count from 1 or auto, and nothing else', () => {
    expect(parseConfigText('server: { workers: 4 }', '(inline)', {}).server.workers).toBe(4);
    expect(parseConfigText('server: { workers: "${N}" }', '(inline)', { N: '3' }).server.workers).toBe(3);
    expect(parseConfigText('server: { workers: auto }', '(inline)', {}).server.workers).toBe('auto');
    for (const bad of ['0', 'many', '-1', '1.5']) {
      expect(() => parseConfigText(`server: { workers: ${bad} }`, '(inline)', {})).toThrow(ConfigError);
    }
  });
});

describe('loadConfigFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));

  it('reads a file and keeps its absolute path', () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, VALID);
    const loaded = loadConfigFile(file, { VLLM_KEY: 'k' });
    expect(loaded.file).toBe(file);
    expect(loaded.config.routes).toHaveLength(1);
  });

  it('names the file and each problem in the error message', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'upstreams: { vllm: { url: "http://h/v1" } }\nroutes:\n  - { model: a, upstream: vllm }\n  - { model: b, upstream: vllm }\n  - { model: c, upstream: vlm }\n');
    expect(() => loadConfigFile(file, {})).toThrow(ConfigError);
    expect(() => loadConfigFile(file, {})).toThrow(/bad\.yaml[\s\S]*routes\[2\]\.upstream: unknown upstream "vlm"/);
  });

  it('reports a missing file as a config problem', () => {
    expect(problemsOf(() => loadConfigFile(join(dir, 'absent.yaml'), {}))[0]).toBe('cannot read the file: it does not exist');
    const named = join(dir, 'named.yaml');
    expect(() => loadConfigFile(named, { GATEWAY_CONFIG: named })).toThrow(`cannot read the config file ${named}: it does not exist (GATEWAY_CONFIG=${named})`);
  });

  it('takes the path from GATEWAY_CONFIG, else config/gateway.yaml', () => {
    expect(defaultConfigPath({ GATEWAY_CONFIG: '/etc/sluice.yaml' })).toBe('/etc/sluice.yaml');
    expect(defaultConfigPath({})).toBe(join(process.cwd(), 'config/gateway.yaml'));
  });
});
