// sluice_mcp_requests_total{server,method,outcome}: every label bounded. The
// server is a configured name (an unknown path is "unknown"), the method one
// the specification defines (methodLabel), the outcome one of a fixed list.
import { Counter, type Registry } from 'prom-client';

/** ok: the server's 2xx or 3xx relayed; rejected: its 4xx or 5xx relayed; refused: a tool call the gateway answered (not allowed, or refused by a plugin); too_large: a body, or a tool's result, past its bound; the rest: the gateway's own answers. */
export type McpOutcome = 'ok' | 'rejected' | 'refused' | 'unauthorized' | 'not_found' | 'invalid' | 'too_large' | 'timeout' | 'unreachable' | 'server_error' | 'client_closed';

export type McpCounter = (server: string, method: string, outcome: McpOutcome) => void;

export function mcpCounter(registry: Registry | undefined): McpCounter {
  if (registry === undefined) return () => {};
  const counter = (registry.getSingleMetric('sluice_mcp_requests_total') as Counter | undefined) ?? new Counter({
    name: 'sluice_mcp_requests_total', registers: [registry], labelNames: ['server', 'method', 'outcome'],
    help: 'MCP requests at /mcp/<server>, by server, JSON-RPC method and how they ended.',
  });
  return (server, method, outcome) => counter.inc({ server, method, outcome });
}
