// A real MCP server for the MCP suites: the SDK's McpServer behind its
// StreamableHTTPServerTransport on a node:http server (port 0), one session
// per initialize. Its tools: add; delete_repo (the one keys are refused);
// count (a progress notification per step); slow (one progress notification,
// then the result `slowMs` later); headers (a digest of the Authorization it
// received and the names of the headers, so a test proves which credential
// arrived without the credential ever reaching the client); echo (its
// arguments back as text, each call's arguments kept in `toolCalls`, so a test
// reads what reached the server); blocks (each of `texts` as a text block, and
// `structured` as structured content, for the tool-result guards).
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface TestMcpServer {
  url: string;
  /** Sessions open now, and the ones ended by a DELETE. */
  sessions: Map<string, StreamableHTTPServerTransport>;
  closedSessions: string[];
  /** Each request the server received: its method and headers. */
  requests: Array<{ method?: string; headers: IncomingMessage['headers'] }>;
  /** The arguments of each call of `echo`, as the server received them. */
  toolCalls: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function mcpServer(slowMs: number, toolCalls: Array<Record<string, unknown>>): McpServer {
  const server = new McpServer({ name: 'sluice-test', version: '1.0.0' });
  server.registerTool('add', { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => text(String(a + b)));
  server.registerTool('delete_repo', { description: 'Deletes a repository.', inputSchema: { name: z.string() } }, async ({ name }) => text(`deleted ${name}`));
  server.registerTool('count', { description: 'Counts, with progress.', inputSchema: { steps: z.number() } }, async ({ steps }, extra) => {
    const progressToken = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: i, total: steps } });
    }
    return text(`counted ${steps}`);
  });
  server.registerTool('slow', { description: 'Reports progress, then answers later.' }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 0, total: 1 } });
    await sleep(slowMs);
    return text('done');
  });
  server.registerTool('headers', { description: 'What reached the server.' }, async (extra) => {
    const headers = extra.requestInfo?.headers ?? {};
    const auth = headers.authorization;
    return text(JSON.stringify({ authorization: typeof auth === 'string' ? sha256(auth) : null, names: Object.keys(headers).sort() }));
  });
  server.registerTool('echo', { description: 'Its arguments back.', inputSchema: { args: z.unknown() } }, async (args) => {
    toolCalls.push(args);
    return text(JSON.stringify(args));
  });
  server.registerTool('blocks', { description: 'Text blocks, and structured content.', inputSchema: { texts: z.array(z.string()), structured: z.record(z.string(), z.unknown()).optional() } },
    async ({ texts, structured }) => ({ content: texts.map((t) => ({ type: 'text' as const, text: t })), ...(structured !== undefined && { structuredContent: structured }) }));
  return server;
}

/** `json`: answer each POST with one JSON object instead of an event stream. */
export async function startMcpServer(opts: { json?: boolean; slowMs?: number } = {}): Promise<TestMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const closedSessions: string[] = [];
  const requests: TestMcpServer['requests'] = [];
  const toolCalls: TestMcpServer['toolCalls'] = [];
  const http: Server = createServer((req, res) => {
    requests.push({ method: req.method, headers: req.headers });
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known !== undefined) return void known.handleRequest(req, res);
    if (typeof id === 'string' || req.method !== 'POST') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
      return;
    }
    // A request without a session: an initialize opens one (the transport refuses anything else).
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: opts.json ?? false,
      onsessioninitialized: (sid) => { sessions.set(sid, transport); },
      onsessionclosed: (sid) => { sessions.delete(sid); closedSessions.push(sid); },
    });
    void mcpServer(opts.slowMs ?? 800, toolCalls).connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sessions,
    closedSessions,
    requests,
    toolCalls,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
