// A real MCP server for the MCP suites: the SDK's McpServer behind its
// StreamableHTTPServerTransport on a node:http server (port 0), one session
// per initialize. Its tools: add; delete_repo (the one keys are refused);
// count (a progress notification per step); slow (one progress notification,
// then the result `slowMs` later); headers (a digest of the Authorization it
// received and the names of the headers, so a test proves which credential
// arrived without the credential ever reaching the client); wait (a progress
// notification, then nothing until the test calls release() or the client
// cancels: each cancellation that reached the server is kept in `cancelled`);
// echo (its arguments back as text, each call's arguments kept in `echoed`, so
// a test reads what reached the server); blocks (each of `texts` as a text
// block, and `structured` as structured content, for the tool-result guards).
// Each tool call the server runs is noted by name (toolCalls).
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
  /** The wait calls a client's notifications/cancelled ended: their request id and the reason it gave. */
  cancelled: Array<{ requestId: string | number; reason: unknown }>;
  /** How many wait calls are waiting now. */
  waiting(): number;
  /** Lets every wait call now waiting answer. */
  release(): void;
  /** The name of each tool call the server ran, in the order they came. */
  toolCalls: string[];
  /** The arguments of each call of `echo`, as the server received them. */
  echoed: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Every tool the test server offers: a key allowed them all (`<server>/*`) lists exactly these. */
export const TEST_TOOLS = ['add', 'delete_repo', 'count', 'slow', 'wait', 'headers', 'echo', 'blocks'] as const;

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the wait tool needs from its server: the gates open now, and where a cancellation is recorded. */
interface Waits {
  open: Set<() => void>;
  cancelled: TestMcpServer['cancelled'];
}

function mcpServer(slowMs: number, waits: Waits, toolCalls: string[], echoed: Array<Record<string, unknown>>, label: string): McpServer {
  const server = new McpServer({ name: 'sluice-test', version: '1.0.0' });
  // Every tool notes its call first: what reached the server, counted by the server.
  server.registerTool('add', { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => (toolCalls.push('add'), text(String(a + b))));
  server.registerTool('delete_repo', { description: 'Deletes a repository.', inputSchema: { name: z.string() } }, async ({ name }) => (toolCalls.push('delete_repo'), text(`deleted ${name}`)));
  server.registerTool('count', { description: 'Counts, with progress.', inputSchema: { steps: z.number() } }, async ({ steps }, extra) => {
    toolCalls.push('count');
    const progressToken = extra._meta?.progressToken;
    for (let i = 1; i <= steps; i++) {
      if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: i, total: steps } });
    }
    return text(`counted ${steps}`);
  });
  server.registerTool('slow', { description: 'Reports progress, then answers later.' }, async (extra) => {
    toolCalls.push('slow');
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 0, total: 1 } });
    await sleep(slowMs);
    return text('done');
  });
  server.registerTool('wait', { description: 'Reports progress, then waits to be released or cancelled.' }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 1, total: 2 } });
    // The SDK aborts a request's signal when the client's notifications/cancelled for it arrives, with the reason it gave.
    const cancelled = await new Promise<boolean>((resolve) => {
      const release = (): void => resolve(false);
      waits.open.add(release);
      extra.signal.addEventListener('abort', () => { waits.open.delete(release); resolve(true); }, { once: true });
    });
    if (cancelled) {
      waits.cancelled.push({ requestId: extra.requestId, reason: extra.signal.reason });
      return text('cancelled');
    }
    if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 2, total: 2 } });
    return text('released');
  });
  server.registerTool('headers', { description: 'What reached the server.' }, async (extra) => {
    toolCalls.push('headers');
    const headers = extra.requestInfo?.headers ?? {};
    const auth = headers.authorization;
    return text(JSON.stringify({ authorization: typeof auth === 'string' ? sha256(auth) : null, names: Object.keys(headers).sort() }));
  });
  server.registerTool('echo', { description: 'Its arguments back.', inputSchema: { args: z.unknown() } }, async (args) => {
    toolCalls.push('echo');
    echoed.push(args);
    return text(JSON.stringify(args));
  });
  server.registerTool('blocks', { description: 'Text blocks, and structured content.', inputSchema: { texts: z.array(z.string()), structured: z.record(z.string(), z.unknown()).optional() } },
    async ({ texts, structured }) => ({ content: texts.map((t) => ({ type: 'text' as const, text: t })), ...(structured !== undefined && { structuredContent: structured }) }));
  // A prompt and a resource, each saying which server answered (`label`), for the federated lists.
  server.registerPrompt('greet', { description: 'A greeting.', argsSchema: { name: z.string() } }, ({ name }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Hello ${name}, from ${label}.` } }],
  }));
  server.registerResource('readme', `test://${label}/readme`, { description: 'This server\'s readme.' }, async (uri) => ({ contents: [{ uri: uri.href, text: `readme of ${label}` }] }));
  server.registerResource('shared', 'test://shared', { description: 'A resource every test server has.' }, async (uri) => ({ contents: [{ uri: uri.href, text: `shared, from ${label}` }] }));
  return server;
}

/** `json`: answer each POST with one JSON object instead of an event stream. */
export async function startMcpServer(opts: { json?: boolean; slowMs?: number } = {}): Promise<TestMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const closedSessions: string[] = [];
  const requests: TestMcpServer['requests'] = [];
  const waits: Waits = { open: new Set(), cancelled: [] };
  const toolCalls: string[] = [];
  const echoed: TestMcpServer['echoed'] = [];
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
    void mcpServer(opts.slowMs ?? 800, waits, toolCalls, echoed, opts.json ? 'json' : 'events').connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sessions,
    closedSessions,
    requests,
    cancelled: waits.cancelled,
    waiting: () => waits.open.size,
    release: () => { for (const open of waits.open) open(); waits.open.clear(); },
    echoed,
    toolCalls,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
