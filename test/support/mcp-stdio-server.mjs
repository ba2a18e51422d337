// A stdio MCP server for the tests of servers the gateway starts: the SDK's
// McpServer on its StdioServerTransport, run as `node mcp-stdio-server.mjs`.
// Plain JavaScript so a test can start it with node alone. Its tools: add;
// drop_table (the one keys are refused); progress (a progress notification
// per step, `ms` apart, then the result); crash (the process
// exits mid-call); flood (one line of `mb` megabytes on stdout); env (its
// pid and the names of its environment variables); stubborn (ignores
// SIGTERM and stays up from then on); ask (an elicitation the
// client answers). It writes to stderr as it starts: that text must reach no client.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const server = new McpServer({ name: 'sluice-stdio-test', version: '1.0.0' });
server.registerTool('add', { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => text(String(a + b)));
server.registerTool('drop_table', { description: 'Drops a table.', inputSchema: { table: z.string() } }, async ({ table }) => text(`dropped ${table}`));
server.registerTool('progress', { description: 'Reports each step, `ms` apart, then answers.', inputSchema: { steps: z.number(), ms: z.number() } }, async ({ steps, ms }, extra) => {
  const progressToken = extra._meta?.progressToken;
  for (let step = 1; step <= steps; step++) {
    if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: step, total: steps } });
    await sleep(ms);
  }
  return text(`${steps} steps`);
});
server.registerTool('crash', { description: 'Exits mid-call.' }, async () => {
  process.exit(3);
});
server.registerTool('flood', { description: 'Writes one long line.', inputSchema: { mb: z.number() } }, async ({ mb }) => {
  const chunk = 'x'.repeat(1024 * 1024);
  for (let i = 0; i < mb; i++) {
    if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
  }
  process.stdout.write('\n');
  return text('flooded');
});
server.registerTool('env', { description: 'Its pid and environment variable names.' }, async () =>
  text(JSON.stringify({ pid: process.pid, names: Object.keys(process.env).sort() })));
server.registerTool('stubborn', { description: 'Ignores SIGTERM from now on, and stays up without its stdin.' }, async () => {
  process.on('SIGTERM', () => {});
  setInterval(() => {}, 1000);
  return text('stubborn');
});
server.registerTool('ask', { description: 'Asks the client a question.' }, async () => {
  const answer = await server.server.elicitInput({ message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } });
  return text(`hello ${answer.content?.name ?? answer.action}`);
});

process.stderr.write(`stdio test server starting: STDERR-ONLY-${'y'.repeat(100)}\n`);
await server.connect(new StdioServerTransport());
