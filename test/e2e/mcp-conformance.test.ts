// The official MCP conformance suite (server mode, every scenario it has)
// against the reference server (server-everything, Streamable HTTP), twice:
// directly, the baseline, and through the gateway at /mcp/everything. Every
// scenario and every check that passes directly must pass through the
// gateway. The CLI takes only a URL, so its requests reach the gateway
// through a forwarder that adds the key's Authorization header and nothing else.
// And the SDK's client on the same server: the same tools through the
// gateway as directly, and a long-running tool's progress.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { passedChecks, runConformance, scenarioPassed, serverScenarios, type ConformanceRun } from '../support/conformance';
import { startBearerForwarder, type BearerForwarder } from '../support/bearer-forwarder';
import { startEverythingServer, type EverythingServer } from '../support/everything-server';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { readRepoFile } from '../support/markdown';
import { connectClient } from '../support/mcp-stack';

jest.setTimeout(120_000);

const agent = makeKey('conformance', { mcp: { servers: ['everything'], tools: ['everything/*'] } });

/** The figures docs/mcp.md's Conformance table gives: the scenarios, then passed scenarios and checks per row. */
function documented(): { scenarios: number; rows: Record<string, [number, number]> } {
  const md = readRepoFile('docs/mcp.md') ?? '';
  const scenarios = Number(/\| Suite [\d.]+, (\d+) server scenarios \|/.exec(md)?.[1]);
  const rows = Object.fromEntries([...md.matchAll(/^\| (the reference server directly|through the gateway) \| (\d+) \| (\d+) \|$/gm)]
    .map((m): [string, [number, number]] => [m[1], [Number(m[2]), Number(m[3])]]));
  return { scenarios, rows };
}

const passedScenarios = (run: ConformanceRun): string[] => [...run.scenarios].filter(([, checks]) => scenarioPassed(checks)).map(([name]) => name).sort();
const failures = (run: ConformanceRun, scenario: string): string[] =>
  (run.scenarios.get(scenario) ?? []).filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? ''}`);

describe('MCP conformance suite', () => {
  let everything: EverythingServer;
  let gw: TestGateway;
  let forwarder: BearerForwarder;
  beforeAll(async () => {
    everything = await startEverythingServer();
    gw = await startGateway({ keys: [agent.entry], mcp: { servers: { everything: { url: everything.url } } } });
    forwarder = await startBearerForwarder(gw.url, agent.key);
  });
  afterAll(async () => {
    await forwarder?.close();
    await gw?.close();
    await everything?.close();
  });

  it('passes through /mcp/everything every scenario and check the reference server passes directly', async () => {
    const all = await serverScenarios();
    const direct = await runConformance(everything.url);
    const relayed = await runConformance(`${forwarder.url}/mcp/everything`);

    // The baseline ran every scenario and is not empty: a run that silently did nothing would prove nothing.
    expect([...direct.scenarios.keys()].sort()).toEqual([...all].sort());
    const baseline = passedScenarios(direct);
    expect(baseline).toEqual(expect.arrayContaining(['server-initialize', 'ping', 'tools-list', 'tools-call-simple-text']));

    const through = passedScenarios(relayed);
    const directChecks = passedChecks(direct);
    const relayedChecks = passedChecks(relayed);
    process.stdout.write(`MCP conformance (${all.length} scenarios): directly ${baseline.length} scenarios / ${directChecks.length} checks passed; through the gateway ${through.length} / ${relayedChecks.length}\n`);

    const lost = baseline.filter((name) => !through.includes(name));
    expect(lost.map((name) => `${name}: ${failures(relayed, name).join('; ')}`)).toEqual([]);
    expect(relayedChecks).toEqual(expect.arrayContaining(directChecks));
    // The figures the docs give are the ones measured.
    expect(documented()).toEqual({
      scenarios: all.length,
      rows: { 'the reference server directly': [baseline.length, directChecks.length], 'through the gateway': [through.length, relayedChecks.length] },
    });
  });

  it('gives the SDK client the reference server\'s tools, and a long-running tool\'s progress, through /mcp/everything', async () => {
    const direct = new Client({ name: 'sluice-e2e', version: '1.0.0' });
    await direct.connect(new StreamableHTTPClientTransport(new URL(everything.url)));
    const names = (await direct.listTools()).tools.map((t) => t.name).sort();
    expect(names).toContain('trigger-long-running-operation');
    await direct.close();

    const { client } = await connectClient(gw.url, 'everything', agent.key);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(names);
    const progress: number[] = [];
    const result = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    expect(progress).toEqual([1, 2]);
    expect(result.content).toEqual([{ type: 'text', text: 'Long running operation completed. Duration: 0.2 seconds, Steps: 2.' }]);
    await client.close();
  });
});
