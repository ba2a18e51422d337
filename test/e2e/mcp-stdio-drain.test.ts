// The real gateway process with a stdio MCP server: SIGTERM drains, then
// stops every process it started (a call still open, one that ignores
// SIGTERM) before it exits 0; none outlives it.
import { connectClient } from '../support/mcp-stack';
import { makeKey } from '../support/gateway';
import { alive, STDIO_SERVER, stdioChildren } from '../support/mcp-stdio-stack';
import { spawnGateway, type GatewayProcess } from '../support/process';

const agent = makeKey('agent', { mcp: { servers: ['tools'], tools: ['tools/*'] } });
const textOf = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0].text;

// Processes to start and stop, a drain of 2 s and a grace before SIGKILL: more than the default 20 s on a loaded machine.
jest.setTimeout(60_000);

describe('stdio MCP servers and the gateway process', () => {
  let gw: GatewayProcess | undefined;
  afterAll(() => { gw?.kill(); });

  it('stops every stdio process on SIGTERM, then exits 0', async () => {
    gw = await spawnGateway(JSON.stringify({
      server: { host: '127.0.0.1', port: 0, drainSeconds: 2, metrics: { port: 0 } },
      keys: [agent.entry],
      mcp: { servers: { tools: { command: process.execPath, args: [STDIO_SERVER] } } },
    }));
    const clients = await Promise.all([connectClient(gw.url, 'tools', agent.key), connectClient(gw.url, 'tools', agent.key)]);
    const pids = await Promise.all(clients.map(async ({ client }) => JSON.parse(textOf(await client.callTool({ name: 'env', arguments: {} }))).pid as number));
    expect(stdioChildren(gw.pid).sort()).toEqual([...pids].sort());
    await clients[0].client.callTool({ name: 'stubborn', arguments: {} });
    // A call still open at the process when the drain begins: its first progress says it is running there.
    // Its client waits to resume a cut stream; its own timeout (8 s) ends that wait, well after the gateway's exit.
    let running!: () => void;
    const started = new Promise<void>((resolve) => { running = resolve; });
    const open = clients[1].client.callTool({ name: 'progress', arguments: { steps: 1, ms: 60_000 } }, undefined, { timeout: 8_000, onprogress: () => running() }).catch((e: unknown) => e);
    await started;
    process.kill(gw.pid, 'SIGTERM');
    // Bounded, and saying what the gateway logged last when it is not met.
    const exit = await Promise.race([gw.exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 20_000).unref())]);
    if (exit !== 0) throw new Error(`the gateway did not exit 0 after SIGTERM (${String(exit)}); its last log lines: ${JSON.stringify(gw.logs.slice(-8).map((l) => l.msg))}`);
    expect(pids.filter(alive)).toEqual([]);
    expect(await open).toHaveProperty('message');
    const stopped = gw.logs.filter((l) => l.msg === 'mcp server process stopped');
    expect(stopped.map((l) => [l.pid, l.reason]).sort()).toEqual(pids.map((pid) => [pid, 'closing']).sort());
    await Promise.all(clients.map(({ client }) => client.close()));
  });
});
