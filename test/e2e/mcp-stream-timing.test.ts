// Wall-clock: an MCP server's event stream reaches the client event by event
// through the gateway, never held whole. The slow tool sends a progress
// notification at once and its result a second later; the notification must
// arrive long before the result (buffered, both would arrive together).
import { agent, connectClient, startMcpStack, type McpStack } from '../support/mcp-stack';

const SLOW_MS = 1000;

describe('MCP stream timing', () => {
  let s: McpStack;
  beforeAll(async () => { s = await startMcpStack({ slowMs: SLOW_MS }); });
  afterAll(async () => { await s.close(); });

  it('delivers the first event long before the server ends the stream', async () => {
    const { client } = await connectClient(s.gw.url, 'files', agent.key);
    const started = performance.now();
    let progressAt: number | undefined;
    const result = await client.callTool({ name: 'slow', arguments: {} }, undefined, { onprogress: () => { progressAt ??= performance.now() - started; } });
    const endedAt = performance.now() - started;
    expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(progressAt).toBeDefined();
    expect(endedAt).toBeGreaterThanOrEqual(SLOW_MS - 50);
    expect(progressAt!).toBeLessThan(endedAt - SLOW_MS * 0.6);
    await client.close();
  });
});
