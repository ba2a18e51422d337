// The bounds of stdio MCP servers the gateway starts: at most maxProcesses
// processes of a server alive at once (a session past it refused with 503,
// counted and shown on sluice_mcp_processes), an idle session reaped, a
// long request keeping its session, and the gateway's close leaving no
// process behind, one that ignores SIGTERM included.
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bearer, call } from '../support/http';
import { connectClient } from '../support/mcp-stack';
import { alice, alive, startStdioStack, stdioChildren, type StdioStack } from '../support/mcp-stdio-stack';
import { parseExposition, scrape, series } from '../support/metrics';
import { until } from '../support/wait';

const BOTH = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const textOf = (result: unknown): string => (result as { content: Array<{ text: string }> }).content[0].text;
type Connected = Awaited<ReturnType<typeof connectClient>>;

describe('stdio MCP servers: bounds', () => {
  let s: StdioStack;
  beforeAll(async () => { s = await startStdioStack(); });
  afterAll(async () => { await s?.close(); });

  it('holds a server to maxProcesses (3): of 5 clients, 3 get sessions, 2 get 503; a session ended frees its place', async () => {
    let most = 0;
    const watch = setInterval(() => { most = Math.max(most, stdioChildren().length); }, 20);
    const tries = await Promise.allSettled(Array.from({ length: 5 }, () => connectClient(s.gw.url, 'tools', alice.key)));
    const open = tries.filter((t): t is PromiseFulfilledResult<Connected> => t.status === 'fulfilled').map((t) => t.value);
    const refused = tries.filter((t): t is PromiseRejectedResult => t.status === 'rejected').map((t) => t.reason);
    expect(open.length).toBe(3);
    expect(refused.length).toBe(2);
    for (const reason of refused) {
      expect(reason).toBeInstanceOf(StreamableHTTPError);
      expect((reason as StreamableHTTPError).code).toBe(503);
    }
    // Every session works while the bound holds.
    const pids = await Promise.all(open.map(async ({ client }) => JSON.parse(textOf(await client.callTool({ name: 'env', arguments: {} }))).pid as number));
    expect(new Set(pids).size).toBe(3);
    expect(stdioChildren().sort()).toEqual([...pids].sort());
    expect((await s.gauge()).tools).toBe(3);
    const raw = await call('POST', `${s.gw.url}/mcp/tools`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }), { ...BOTH, ...bearer(alice.key) });
    expect([raw.status, raw.body.error.code, raw.body.error.message]).toEqual([503, -32000, 'Too many sessions on this MCP server. Try again later.']);
    clearInterval(watch);
    expect(most).toBeLessThanOrEqual(3);

    await open[0].transport.terminateSession();
    await until(() => !alive(pids[0]), 'the ended session\'s process to exit', 5000);
    const next = await connectClient(s.gw.url, 'tools', alice.key);
    expect(stdioChildren().length).toBe(3);
    for (const { client, transport } of [...open.slice(1), next]) {
      await transport.terminateSession();
      await client.close();
    }
    await open[0].client.close();
    await until(async () => (await s.gauge()).tools === 0, 'the gauge to fall to 0', 5000);
    const counted = series(parseExposition((await scrape(s.gw.metrics!.url)).text), 'sluice_mcp_requests_total');
    expect(counted['method=initialize,outcome=busy,server=tools']).toBeGreaterThanOrEqual(3);
  });

  it('reaps a session with no request for idleTimeoutMs (1 s), never one whose request is still open', async () => {
    const { client, transport } = await connectClient(s.gw.url, 'idle', alice.key);
    const { pid } = JSON.parse(textOf(await client.callTool({ name: 'env', arguments: {} })));
    // A call longer than the idle time: the session is busy, not idle.
    expect(textOf(await client.callTool({ name: 'progress', arguments: { steps: 1, ms: 1500 } }))).toBe('1 steps');
    expect(alive(pid)).toBe(true);
    await until(() => !alive(pid), 'the idle process to be reaped', 5000);
    const after = await call('POST', `${s.gw.url}/mcp/idle`, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' }), { ...BOTH, ...bearer(alice.key), 'mcp-session-id': transport.sessionId! });
    expect(after.status).toBe(404);
    expect(s.lines.map((l) => JSON.parse(l)).find((l) => l.pid === pid && l.msg === 'mcp server process stopped')).toMatchObject({ reason: 'idle' });
    await client.close();
  });

  it('leaves no process behind when the gateway closes: open calls, GET streams and a process that ignores SIGTERM', async () => {
    const own = await startStdioStack();
    const clients = await Promise.all([connectClient(own.gw.url, 'tools', alice.key), connectClient(own.gw.url, 'tools', alice.key), connectClient(own.gw.url, 'idle', alice.key)]);
    const pids = await Promise.all(clients.map(async ({ client }) => JSON.parse(textOf(await client.callTool({ name: 'env', arguments: {} }))).pid as number));
    await clients[0].client.callTool({ name: 'stubborn', arguments: {} });
    const open = clients[1].client.callTool({ name: 'progress', arguments: { steps: 1, ms: 60_000 } }, undefined, { timeout: 120_000 }).catch((e: unknown) => e);
    expect(pids.every(alive)).toBe(true);
    await own.close();
    expect(pids.filter(alive)).toEqual([]);
    // The others left when their stdin closed; the stubborn one only at SIGKILL, after the grace: the close waited for it.
    const stopped = own.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'mcp server process stopped');
    expect(Object.fromEntries(stopped.map((l) => [l.pid, [l.signal === 'SIGKILL', l.reason]]))).toEqual({
      [pids[0]]: [true, 'closing'], [pids[1]]: [false, 'closing'], [pids[2]]: [false, 'closing'],
    });
    // The call ends without a result (its connection is cut as the gateway closes), never hangs.
    expect(await open).toHaveProperty('message');
    await Promise.all(clients.map(({ client }) => client.close()));
  });
});
