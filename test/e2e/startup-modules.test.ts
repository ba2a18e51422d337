// What a gateway loads at start is what its config uses: one that does not
// trace never loads the OpenTelemetry SDK (some 250 modules, about 12 MB of
// resident memory at start), and one that traces does.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnGateway } from '../support/process';

const dir = mkdtempSync(join(tmpdir(), 'sluice-modules-'));
const probe = join(dir, 'sdk-probe.js');
writeFileSync(probe, "process.on('exit', () => process.stderr.write('sdk-loaded=' + Object.keys(require.cache).some((k) => k.includes('@opentelemetry/sdk-trace')) + '\\n'));\n");

const yaml = (extra: string) => `upstreams:\n  b: { url: "http://127.0.0.1:9/v1", format: openai }\nroutes:\n  - { model: "*", upstream: b }\n${extra}`;

async function sdkLoaded(extra: string): Promise<string> {
  const gw = await spawnGateway(yaml(extra), undefined, { NODE_OPTIONS: `--require ${probe}` });
  gw.child.kill('SIGTERM');
  await gw.exited;
  return /sdk-loaded=(\w+)/.exec(gw.stderr)?.[1] ?? `no probe line in: ${gw.stderr}`;
}

describe('modules loaded at start', () => {
  it('leaves the OpenTelemetry SDK out of a gateway that does not trace', async () => {
    expect(await sdkLoaded('')).toBe('false');
  });

  it('loads it for one that does', async () => {
    expect(await sdkLoaded('telemetry:\n  traces: { endpoint: "http://127.0.0.1:9/v1/traces" }\n')).toBe('true');
  });
});
