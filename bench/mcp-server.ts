// The benchmark's MCP server: Streamable HTTP at /mcp, every answer JSON,
// one tool (`echo`) that answers at once, so what is measured is the path
// to it, not the tool. initialize opens a session (its id in
// Mcp-Session-Id); notifications get 202. Prints {"port":N} when listening.
import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const TOOLS = { tools: [{ name: 'echo', description: 'Answers what it was sent.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }] };

function answer(res: ServerResponse, id: unknown, result: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify({ jsonrpc: '2.0', id, result });
  res.writeHead(200, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method === 'DELETE') return void res.writeHead(200).end();
    let message: { id?: unknown; method?: string; params?: { arguments?: { text?: string } } };
    try {
      message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return void res.writeHead(400).end();
    }
    if (message.id === undefined) return void res.writeHead(202).end();
    if (message.method === 'initialize') {
      return answer(res, message.id, { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bench', version: '1' } }, { 'mcp-session-id': randomUUID() });
    }
    if (message.method === 'tools/list') return answer(res, message.id, TOOLS);
    answer(res, message.id, { content: [{ type: 'text', text: message.params?.arguments?.text ?? '' }] });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
