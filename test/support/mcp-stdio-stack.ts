// One gateway for the stdio MCP suites: test/support/mcp-stdio-server.mjs
// started by the gateway as three servers (tools: at most 3 processes;
// quick: a 300 ms request timeout; idle: sessions reaped after 1 s), the
// reference server in its stdio mode (everything), a command that does not exist, two keys
// with the same lists (a session is its opener's alone), metrics on, the log
// in memory. A secret in the gateway's own environment shows whether it
// reaches a child.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { makeKey, startGateway, type TestGateway } from './gateway';
import { parseExposition, scrape, series } from './metrics';

export const STDIO_SERVER = join(__dirname, 'mcp-stdio-server.mjs');
/** The reference server, in its stdio mode. */
const EVERYTHING = join(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
/** In the gateway's environment while it runs; never in a child's. */
export const GATEWAY_SECRET_VAR = 'SLUICE_TEST_GATEWAY_SECRET';
const GIVEN_VAR = 'SLUICE_TEST_GIVEN';

const lists = { mcp: { servers: ['tools', 'quick', 'idle', 'nowhere', 'everything'], tools: ['tools/add', 'tools/progress', 'tools/crash', 'tools/flood', 'tools/env', 'tools/ask', 'tools/stubborn', 'quick/*', 'idle/*', 'everything/*'] } };
export const alice = makeKey('alice', lists);
export const bob = makeKey('bob', lists);

export interface StdioStack {
  gw: TestGateway;
  lines: string[];
  /** sluice_mcp_processes, by server. */
  gauge(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export async function startStdioStack(): Promise<StdioStack> {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const server = (extra: Record<string, unknown>) => ({ command: process.execPath, args: [STDIO_SERVER], ...extra });
  process.env[GATEWAY_SECRET_VAR] = 'gateway-only';
  process.env[GIVEN_VAR] = 'given-to-child';
  const gw = await startGateway({
    server: { port: 0, bodyLimit: '64kb' },
    keys: [alice.entry, bob.entry],
    mcp: {
      servers: {
        tools: server({ maxProcesses: 3, env: { GIVEN: `\${${GIVEN_VAR}}` } }),
        quick: server({ timeoutMs: 300 }),
        idle: server({ idleTimeoutMs: 1000 }),
        nowhere: { command: '/nonexistent/mcp-server', maxProcesses: '2' },
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      },
    },
  }, { logger, metrics: {} });
  delete process.env[GIVEN_VAR];
  const gauge = async () => {
    const all = series(parseExposition((await scrape(gw.metrics!.url)).text), 'sluice_mcp_processes');
    return Object.fromEntries(Object.entries(all).map(([k, v]) => [k.replace('server=', ''), v]));
  };
  return {
    gw, lines, gauge,
    close: async () => {
      await gw.close();
      delete process.env[GATEWAY_SECRET_VAR];
    },
  };
}

/** The pids of `parent`'s children (this process's by default) running the stdio test server, read from /proc. */
export function stdioChildren(parent = process.pid): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('mcp-stdio-server.mjs')) pids.push(Number(entry));
    } catch {
      // the process ended while being read
    }
  }
  return pids;
}

/** Whether a process of this pid is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
