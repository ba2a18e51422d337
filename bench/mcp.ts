// What a tool call costs through the gateway: the same tools/call sent to the
// MCP server directly, through /mcp/<server> (the relay) and through the
// federated /mcp (the gateway's own session, the name routed), interleaved.
// Latency of sequential calls (p50, p99, and what the gateway adds), and the
// gateway's CPU time per call under 32 concurrent callers, from /proc, with
// the server's own CPU per call beside it for scale.
import { latencies, percentile } from './client';
import { cpuPerRequest } from './cpu';
import { round } from './table';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: object) => Promise<{ requests: { total: number }; non2xx: number; errors: number }>;

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const INIT = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });

async function sessionOf(url: string, headers: Record<string, string>): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: { ...MCP_HEADERS, ...headers }, body: INIT });
  await res.text();
  const id = res.headers.get('mcp-session-id');
  if (res.status !== 200 || id === null) throw new Error(`${url}: initialize answered ${res.status}`);
  return id;
}

export interface McpTargets { direct: string; relay: string; federated: string; key: string; gatewayPid: number; serverPid: number }

export async function mcpCost(t: McpTargets, quick: boolean) {
  const auth = { authorization: `Bearer ${t.key}` };
  const parties = {
    direct: { url: t.direct, headers: { ...MCP_HEADERS, 'mcp-session-id': await sessionOf(t.direct, {}) }, tool: 'echo' },
    relay: { url: t.relay, headers: { ...MCP_HEADERS, ...auth, 'mcp-session-id': await sessionOf(t.relay, auth) }, tool: 'echo' },
    federated: { url: t.federated, headers: { ...MCP_HEADERS, ...auth, 'mcp-session-id': await sessionOf(t.federated, auth) }, tool: 'tools__echo' },
  };
  type Party = keyof typeof parties;
  const names = Object.keys(parties) as Party[];
  const body = (tool: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: { text: 'hello' } } });
  for (const n of names) await latencies(parties[n].url, body(parties[n].tool), parties[n].headers, quick ? 200 : 1000);
  const lat: Record<Party, number[]> = { direct: [], relay: [], federated: [] };
  for (let i = 0; i < (quick ? 3 : 10); i++) for (const n of names) lat[n].push(...await latencies(parties[n].url, body(parties[n].tool), parties[n].headers, 300));
  const count = quick ? 3_000 : 10_000;
  const cpu = async (n: Party, pid: number) => cpuPerRequest(pid, count, async () => {
    const r = await autocannon({ url: parties[n].url, method: 'POST', headers: parties[n].headers, body: body(parties[n].tool), connections: 32, amount: count });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${n}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  });
  const p = (n: Party, q: number) => round(percentile(lat[n], q));
  return {
    latencyMs: Object.fromEntries(names.map((n) => [n, { p50: p(n, 50), p99: p(n, 99) }])),
    addedLatencyMs: {
      relay: { p50: round(p('relay', 50) - p('direct', 50)), p99: round(p('relay', 99) - p('direct', 99)) },
      federated: { p50: round(p('federated', 50) - p('direct', 50)), p99: round(p('federated', 99) - p('direct', 99)) },
    },
    cpuMicrosPerCall: {
      server: await cpu('direct', t.serverPid),
      gatewayRelay: await cpu('relay', t.gatewayPid),
      gatewayFederated: await cpu('federated', t.gatewayPid),
    },
  };
}
