// sluice_mcp_requests_total{server,method,outcome}: every label bounded. The
// server is a configured name (an unknown path is "unknown"; a federated request no one server answered, "*"), the method one
// the specification defines (methodLabel), the outcome one of a fixed list.
import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * ok: the server's 2xx or 3xx relayed; rejected: its 4xx or 5xx relayed; refused: a tool call the key may not
 * make, or a plugin refused; too_large: a body, or a tool's result, past its bound; limited: a tool call over a limit; limiter_unavailable: a tool call whose limits could not be checked
 * (redis.failMode closed); identity_unavailable: an access token that could not be checked (its issuer's keys
 * out of reach); busy: a stdio server at its bound of processes; the rest: the gateway's own answers.
 */
export type McpOutcome = 'ok' | 'rejected' | 'refused' | 'limited' | 'limiter_unavailable' | 'unauthorized' | 'identity_unavailable' | 'not_found' | 'invalid' | 'too_large' | 'timeout' | 'unreachable' | 'server_error' | 'client_closed' | 'busy';

export type McpCounter = (server: string, method: string, outcome: McpOutcome) => void;

export function mcpCounter(registry: Registry | undefined): McpCounter {
  if (registry === undefined) return () => {};
  const counter = (registry.getSingleMetric('sluice_mcp_requests_total') as Counter | undefined) ?? new Counter({
    name: 'sluice_mcp_requests_total', registers: [registry], labelNames: ['server', 'method', 'outcome'],
    help: 'MCP requests at /mcp and /mcp/<server>, by server, JSON-RPC method and how they ended.',
  });
  return (server, method, outcome) => counter.inc({ server, method, outcome });
}

/** What a stdio server's relay reports: its live processes, read at each scrape. */
interface ProcessSource { server: string; running(): number }
const processSources = new WeakMap<Registry, Set<ProcessSource>>();

/**
 * sluice_mcp_processes{server}: processes of each stdio server alive now. A
 * reload's old runtime keeps its processes until it closes: each source is
 * summed under its server's name until it unwatches. Returns the unwatch.
 */
export function watchProcesses(registry: Registry | undefined, server: string, running: () => number): () => void {
  if (registry === undefined) return () => {};
  let sources = processSources.get(registry);
  if (sources === undefined) {
    const watched = new Set<ProcessSource>();
    sources = watched;
    processSources.set(registry, watched);
    new Gauge({
      name: 'sluice_mcp_processes', help: 'Processes of each stdio MCP server alive now (one per session), at most its maxProcesses.',
      labelNames: ['server'], registers: [registry],
      collect() {
        this.reset();
        const sums = new Map<string, number>();
        for (const s of watched) sums.set(s.server, (sums.get(s.server) ?? 0) + s.running());
        for (const [name, value] of sums) this.set({ server: name }, value);
      },
    });
  }
  const source = { server, running };
  sources.add(source);
  return () => void sources.delete(source);
}
