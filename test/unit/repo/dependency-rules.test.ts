// The dependency rules CI enforces (.dependency-cruiser.cjs), proved to bite:
// the real tree passes, and a copy of it with one violation of each rule fails
// naming that rule.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..');
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');

function cruise(cwd: string): { ok: boolean; output: string } {
  try {
    return { ok: true, output: execFileSync(depcruise, ['src', 'plugins', '--config', '.dependency-cruiser.cjs'], { cwd, encoding: 'utf8', stdio: 'pipe' }) };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('dependency rules', () => {
  it('hold on the tree as it is', () => {
    const result = cruise(root);
    expect(result.output).toContain('no dependency violations');
    expect(result.ok).toBe(true);
  }, 30_000);

  it('let no two folders import each other (the process and the composition root apart)', () => {
    const graph = JSON.parse(execFileSync(depcruise, ['src', 'plugins', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
    // A folder: src/<folder>/, plugins/ as a whole, and the process (the root of src/ with src/cluster/, its primary and workers).
    const folderOf = (path: string): string => {
      const parts = path.split('/');
      if (parts[0] === 'plugins') return 'plugins';
      return parts.length === 2 || parts[1] === 'cluster' ? 'the process' : `src/${parts[1]}`;
    };
    const edges = new Set<string>();
    for (const m of graph.modules) for (const d of m.dependencies) {
      const [from, to] = [folderOf(m.source), folderOf(d.resolved)];
      if (from !== to && (d.resolved.startsWith('src/') || d.resolved.startsWith('plugins/'))) edges.add(`${from} -> ${to}`);
    }
    const pairs = [...edges].map((e) => e.split(' -> ')).filter(([a, b]) => a < b && edges.has(`${b} -> ${a}`)).map(([a, b]) => `${a} <-> ${b}`);
    // The composition root: src/gateway.ts hands plugins/ to the registry, and plugins/ import src/index.ts.
    expect(pairs).toEqual(['plugins <-> the process']);
  }, 30_000);

  it.each([
    ['plugins-use-the-public-api', 'plugins/limits/deep.ts', "import type { Budget } from '../../src/config/schema';\nexport type X = Budget;\n"],
    ['core-names-no-plugin', 'src/api/uses-plugin.ts', "import { plugin } from '../../plugins/limits';\nexport const p = plugin;\n"],
    ['contract-is-a-leaf', 'src/contract/plugin.ts', "import type { Runtime } from '../runtime';\nexport type R = Runtime;\n"],
    ['contract-is-a-leaf', 'src/contract/admission.ts', "import type { Scopes } from '../admission/scopes';\nexport type S = Scopes;\n"],
    ['leaves-stay-leaves', 'src/config/values.ts', "import type { Runtime } from '../runtime';\nexport type R = Runtime;\n"],
    ['text-is-a-leaf', 'src/text/fold.ts', "import type { Route } from '../contract/types';\nexport type R = Route;\n"],
    ['plumbing-is-a-leaf', 'src/plumbing/log.ts', "import type { Runtime } from '../runtime';\nexport type R = Runtime;\n"],
    ['worker-link-under-the-services', 'src/worker-link/tick-batcher.ts', "import type { Scopes } from '../admission/scopes';\nexport type S = Scopes;\n"],
    ['services-under-the-pipeline', 'src/spend/uses-cluster.ts', "import * as ipc from '../cluster/ipc';\nexport const i = ipc;\n"],
    ['request-view-is-a-leaf', 'src/request/usage.ts', "import type { Route } from '../routing/routes';\nexport type R = Route;\n"],
    ['services-under-the-pipeline', 'src/fleet/uses-context.ts', "import type { Context } from '../pipeline/context';\nexport type C = Context;\n"],
    ['services-under-the-pipeline', 'src/pricing/uses-proxy.ts', "import * as reply from '../proxy/reply';\nexport const r = reply;\n"],
    ['services-under-the-pipeline', 'src/spend/uses-context.ts', "import type { Context } from '../pipeline/context';\nexport type C = Context;\n"],
    ['services-under-the-pipeline', 'src/metrics/uses-runtime.ts', "import type { Runtime } from '../runtime';\nexport type R = Runtime;\n"],
    ['pipeline-under-the-protocols', 'src/pipeline/uses-protocol.ts', "import { parseResponsesRequest } from '../protocols/responses/request';\nexport const p = parseResponsesRequest;\n"],
    ['protocols-under-the-proxy', 'src/protocols/uses-proxy.ts', "import type { Reply } from '../proxy/reply';\nexport type R = Reply;\n"],
    ['stores-and-rules-under-the-proxy', 'src/output-rules/uses-proxy.ts', "import type { Reply } from '../proxy/reply';\nexport type R = Reply;\n"],
    ['stores-and-rules-under-the-proxy', 'src/responses-store/uses-api.ts', "import * as turns from '../api/stored-turns';\nexport const t = turns;\n"],
    ['protocols-under-the-proxy', 'src/protocols/uses-store.ts', "import * as store from '../responses-store/store';\nexport const s = store;\n"],
    ['proxy-under-the-api', 'src/proxy/uses-api.ts', "import { parseChatRequest } from '../api/chat-request';\nexport const p = parseChatRequest;\n"],
    ['passthrough-on-top-of-the-api', 'src/api/uses-passthrough.ts', "import * as routes from './passthrough/routes';\nexport const r = routes;\n"],
    ['api-under-the-process', 'src/api/passthrough/uses-keys.ts', "import * as store from '../../keys/store';\nexport const s = store;\n"],
    ['mcp-under-the-process', 'src/mcp/uses-runtime.ts', "import type { Runtime } from '../runtime';\nexport type R = Runtime;\n"],
    ['only-the-process-knows-mcp', 'src/api/uses-mcp.ts', "import * as mcp from '../mcp/gateway';\nexport const m = mcp;\n"],
    ['keys-under-the-admin', 'src/keys/uses-admin.ts', "import * as audit from '../admin/audit';\nexport const a = audit;\n"],
    ['admin-under-the-process', 'src/admin/uses-proxy.ts', "import * as upstream from '../proxy/upstream';\nexport const u = upstream;\n"],
    ['no-cycles', 'src/contract/types.ts', "import type { Runtime } from '../runtime';\nexport type R2 = Runtime;\n"],
  ])('fail on a violation of %s (%s)', (rule, file, line) => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-deps-'));
    try {
      for (const part of ['src', 'plugins', 'tsconfig.json', '.dependency-cruiser.cjs']) cpSync(join(root, part), join(dir, part), { recursive: true });
      const target = join(dir, file);
      writeFileSync(target, line + (existsSync(target) ? readFileSync(target, 'utf8') : ''));
      const result = cruise(dir);
      expect(result.ok).toBe(false);
      expect(result.output).toContain(rule);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
