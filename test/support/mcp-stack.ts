// One gateway for the MCP suites: two real MCP servers (events; JSON answers),
// a silent one (accepts, never answers) and a dead one (nothing listening),
// one that breaks off mid-stream, keys with and without MCP lists, an org that grants MCP to its keys, metrics
// on, the access log in memory. The servers' credential comes from ${VAR}.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { makeKey, startGateway, type TestGateway } from './gateway';
import { startMcpServer, type TestMcpServer } from './mcp-server';
import { freePort } from './net';
import { until } from './wait';

/** The servers' credential: made up here, set as the variable the config names. */
export const SERVER_TOKEN = `mcp-upstream-${Math.random().toString(36).slice(2)}`;
const TOKEN_VAR = 'SLUICE_TEST_MCP_TOKEN';

export const agent = makeKey('agent', { mcp: { servers: ['files', 'json', 'silent', 'dead', 'broken'], tools: ['files/add', 'files/count', 'files/slow', 'files/headers', 'json/add'] } });
/** No MCP list, no org: no MCP access. */
export const plain = makeKey('plain');
/** Its org's lists: every server, one tool. */
export const member = makeKey('member', { org: 'tools-team' });

export interface McpStack {
  gw: TestGateway;
  files: TestMcpServer;
  json: TestMcpServer;
  lines: string[];
  /** The access line of a request, once its response has closed. */
  accessLine(requestId: string): Promise<Record<string, any>>;
  close(): Promise<void>;
}

/** `config`: more of the gateway's config (an admin section, redis); `admin`: start the admin listener too. */
export async function startMcpStack(opts: { slowMs?: number; config?: Record<string, unknown>; admin?: boolean } = {}): Promise<McpStack> {
  const files = await startMcpServer({ slowMs: opts.slowMs });
  const json = await startMcpServer({ json: true });
  const silent: Server = createServer(() => { /* never answers */ });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  // Opens an event stream, sends one event and breaks off.
  const broken: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n');
    setTimeout(() => res.destroy(), 20);
  });
  await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
  const deadPort = await freePort();
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  process.env[TOKEN_VAR] = SERVER_TOKEN;
  const headers = { Authorization: `Bearer \${${TOKEN_VAR}}` };
  const gw = await startGateway({
    server: { port: 0, bodyLimit: '64kb' },
    keys: [agent.entry, plain.entry, member.entry],
    orgs: { 'tools-team': { mcp: { servers: ['*'], tools: ['files/add'] } } },
    mcp: {
      servers: {
        files: { url: files.url, headers },
        json: { url: json.url, headers },
        silent: { url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`, timeoutMs: 300 },
        dead: { url: `http://127.0.0.1:${deadPort}/mcp` },
        broken: { url: `http://127.0.0.1:${(broken.address() as AddressInfo).port}/mcp` },
      },
    },
    ...opts.config,
  }, { logger, metrics: {}, admin: opts.admin });
  delete process.env[TOKEN_VAR];
  const accessLine = async (requestId: string): Promise<Record<string, any>> => {
    const find = () => lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.requestId === requestId);
    await until(() => find() !== undefined, `the access line of ${requestId}`, 3000);
    return find();
  };
  return {
    gw, files, json, lines, accessLine,
    close: async () => {
      await gw.close();
      await files.close();
      await json.close();
      for (const server of [silent, broken]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}

/** Every response body and header a client received, as text, for the checks that a secret never reached it. */
export interface Received { texts: string[] }

/** The SDK's client, connected through the gateway at /mcp/<server> with `key`; what it receives is kept in `received`. */
export async function connectClient(gatewayUrl: string, server: string, key: string, received: Received = { texts: [] }): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp/${server}`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      received.texts.push(JSON.stringify([...res.headers.entries()]));
      // A copy of the body, read as it comes; an event stream's ends when the stream does.
      if (res.body !== null) void res.clone().text().then((t) => { received.texts.push(t); }, () => {});
      return res;
    },
  });
  const client = new Client({ name: 'sluice-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}
