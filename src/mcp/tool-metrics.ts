// sluice_mcp_tool_calls_total{server,tool,outcome} and
// sluice_mcp_tool_call_duration_seconds{server,tool}: one count and one
// duration per tools/call. Every label is bounded: the server is a configured
// name; the tool is a name the key may call, shaped as the tools
// specification shapes names (1-128 of A-Z a-z 0-9 _ - .), and only the first
// MAX_TOOLS_PER_SERVER such names of each server (for the life of the
// process) get a label of their own; any other name (one the key may not
// call, a glob's stranger, the 101st) is "other". The client never chooses a label.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { McpOutcome } from './metrics';

export const MAX_TOOLS_PER_SERVER = 100;
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** A name shaped as the tools specification shapes tool names: what may name a label or a span. */
export const isToolName = (name: string): boolean => TOOL_NAME.test(name);

/** A tool call takes from milliseconds (a lookup) to minutes (a build, a long search). */
const BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export type ToolCallCounter = (server: string, tool: string | undefined, allowed: boolean, outcome: McpOutcome, seconds: number) => void;

/** The tool names labelled so far, by server: per registry, so a reload does not make room for 100 more. */
const labelled = new WeakMap<Registry, Map<string, Set<string>>>();

/** The tool label of a call: the name when it may have one (allowed, well formed, within the server's bound), else "other". */
export function toolLabel(seen: Map<string, Set<string>>, server: string, tool: string | undefined, allowed: boolean): string {
  if (!allowed || tool === undefined || !isToolName(tool)) return 'other';
  let names = seen.get(server);
  if (names === undefined) seen.set(server, (names = new Set()));
  if (names.has(tool)) return tool;
  if (names.size >= MAX_TOOLS_PER_SERVER) return 'other';
  names.add(tool);
  return tool;
}

export function toolCallCounter(registry: Registry | undefined): ToolCallCounter {
  if (registry === undefined) return () => {};
  const calls = (registry.getSingleMetric('sluice_mcp_tool_calls_total') as Counter | undefined) ?? new Counter({
    name: 'sluice_mcp_tool_calls_total', registers: [registry], labelNames: ['server', 'tool', 'outcome'],
    help: 'MCP tools/call requests, by server, tool and how they ended.',
  });
  const duration = (registry.getSingleMetric('sluice_mcp_tool_call_duration_seconds') as Histogram | undefined) ?? new Histogram({
    name: 'sluice_mcp_tool_call_duration_seconds', registers: [registry], labelNames: ['server', 'tool'], buckets: BUCKETS,
    help: 'MCP tools/call requests from arrival to the response\'s close, by server and tool.',
  });
  let seen = labelled.get(registry);
  if (seen === undefined) labelled.set(registry, (seen = new Map()));
  const names = seen;
  return (server, tool, allowed, outcome, seconds) => {
    const label = toolLabel(names, server, tool, allowed);
    calls.inc({ server, tool: label, outcome });
    duration.observe({ server, tool: label }, seconds);
  };
}
