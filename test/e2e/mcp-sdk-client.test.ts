// The SDK's client (the version 1 line) through /mcp/<server>, on the two
// answer shapes a server may use (an event stream; one JSON object): a
// tool's progress notifications reach the client while the tool is still
// running (the tool waits, by construction, until the test has seen its first
// progress), and a call the client cancels with an AbortSignal sends
// notifications/cancelled, which reaches the server (its handler's signal is
// aborted with the client's reason) and is counted and logged by the gateway;
// the session goes on, and nothing is left hanging.
import pino from 'pino';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { connectClient } from '../support/mcp-stack';
import { startMcpServer, TEST_TOOLS, type TestMcpServer } from '../support/mcp-server';
import { parseExposition, scrape, series } from '../support/metrics';
import { until } from '../support/wait';

const agent = makeKey('sdk-agent', { mcp: { servers: ['files', 'json'], tools: ['files/*', 'json/add', 'json/wait'] } });

describe('MCP: the SDK client through /mcp/<server>', () => {
  let files: TestMcpServer;
  let json: TestMcpServer;
  let gw: TestGateway;
  const lines: string[] = [];
  const logged = () => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
  beforeAll(async () => {
    files = await startMcpServer();
    json = await startMcpServer({ json: true });
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    gw = await startGateway({ keys: [agent.entry], mcp: { servers: { files: { url: files.url }, json: { url: json.url } } } }, { logger, metrics: {} });
  });
  afterAll(async () => {
    await gw?.close();
    await files?.close();
    await json?.close();
  });

  it('lists the tools and receives a running tool\'s progress before its answer', async () => {
    const { client } = await connectClient(gw.url, 'files', agent.key);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TEST_TOOLS].sort());

    const progress: number[] = [];
    let answered = false;
    const call = client.callTool({ name: 'wait', arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) })
      .finally(() => { answered = true; });
    // The tool cannot answer before release(): the first notification arrived while it was running.
    await until(() => progress.length === 1, 'the first progress notification');
    expect(answered).toBe(false);
    expect(files.waiting()).toBe(1);
    files.release();
    expect((await call).content).toEqual([{ type: 'text', text: 'released' }]);
    expect(progress).toEqual([1, 2]);
    await client.close();
  });

  it.each(['files', 'json'])('cancels a call on %s: notifications/cancelled reaches the server, the gateway counts and logs it, the session goes on', async (server) => {
    const upstream = server === 'files' ? files : json;
    const { client } = await connectClient(gw.url, server, agent.key);
    const before = upstream.cancelled.length;
    const abort = new AbortController();
    const call = client.callTool({ name: 'wait', arguments: {} }, undefined, { signal: abort.signal }).catch((e: unknown) => e);
    // The tool is running at the server when the call is cancelled.
    await until(() => upstream.waiting() === 1, 'the call running at the server');
    abort.abort('stopped by the test');
    const refused = await call;
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).message).toContain('stopped by the test');

    await until(() => upstream.cancelled.length > before, `the cancellation at ${server}`);
    expect(upstream.cancelled.slice(before)).toEqual([{ requestId: expect.anything(), reason: 'stopped by the test' }]);
    await until(() => logged().some((l) => l.server === server && l.method === 'notifications/cancelled'), 'the cancellation\'s access line');
    expect(logged().filter((l) => l.server === server && l.method === 'notifications/cancelled'))
      .toEqual([expect.objectContaining({ keyId: 'sdk-agent', protocol: 'mcp', status: 202, outcome: 'ok' })]);
    const counts = series(parseExposition((await scrape(gw.metrics!.url)).text), 'sluice_mcp_requests_total');
    expect(counts[`method=notifications/cancelled,outcome=ok,server=${server}`]).toBe(1);

    // The session still serves calls.
    expect((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).content).toEqual([{ type: 'text', text: '3' }]);
    // The cancelled call's own request ends when the client closes: logged, not left open.
    const calls = () => logged().filter((l) => l.server === server && l.method === 'tools/call' && l.tool === 'wait');
    const ended = calls().length;
    await client.close();
    await until(() => calls().length > ended, 'the cancelled call\'s access line');
    expect(calls().slice(ended)).toEqual([expect.objectContaining({ status: 499, outcome: 'client_closed' })]);
  });
});
