// Tools and tool_choice for a chat backend. Function tools translate one to
// one. A namespace groups function tools the client runs (the Codex CLI puts
// each MCP server's tools in one); OpenAI's model calls them by name plus
// namespace, so they become chat functions named "<namespace>__<name>" and
// are named back on the way out. Every other tool runs on OpenAI's side
// (web_search, file_search, code_interpreter, mcp, ...) or needs a grammar a
// chat backend does not take (custom): it is dropped, or refused when the
// route says so.
import { GatewayError } from '../../errors';
import type { FunctionTool, NamespaceTool, Tool, ToolChoice } from './types';

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** What a translated route does with a tool its chat backend cannot run. */
export type HostedTools = 'drop' | 'refuse';

/** The chat name of a namespace's function. Codex's MCP namespaces end in "__" ("mcp__docs__" + "search" reads as one name). */
export function chatToolName(namespace: string | null | undefined, name: string): string {
  if (!namespace) return name;
  return namespace.endsWith('_') ? namespace + name : `${namespace}__${name}`;
}

export interface FunctionName { name: string; namespace?: string }

/** Chat name → name and namespace, for every function inside a namespace of the request's tools. */
export function namespacedFunctions(tools: readonly Tool[] | null | undefined): Map<string, FunctionName> {
  const names = new Map<string, FunctionName>();
  for (const tool of tools ?? []) {
    if (tool.type !== 'namespace') continue;
    const namespace = (tool as NamespaceTool).name;
    for (const inner of (tool as NamespaceTool).tools) {
      if (inner.type === 'function') names.set(chatToolName(namespace, (inner as FunctionTool).name), { name: (inner as FunctionTool).name, namespace });
    }
  }
  return names;
}

// OpenAI's tool types, so a dropped one is named by its type; any other is "other" (names feed a metric label).
const TOOL_TYPES = new Set(['file_search', 'computer', 'computer_use_preview', 'web_search', 'web_search_preview', 'web_search_2025_08_26',
  'web_search_preview_2025_03_11', 'mcp', 'code_interpreter', 'image_generation', 'local_shell', 'shell', 'custom', 'tool_search', 'apply_patch', 'programmatic_tool_calling']);

/** The chat tools for a request's tools; what no chat backend runs is named in `dropped`, or refused. */
export function chatTools(tools: readonly Tool[], hosted: HostedTools, dropped: Set<string>): ChatTool[] {
  const out: ChatTool[] = [];
  const unusable: { label: string; param: string }[] = [];
  const skip = (tool: Tool, param: string) => {
    unusable.push({ label: tool.name ? `${tool.type} "${tool.name}"` : tool.type, param });
    dropped.add(`tools:${TOOL_TYPES.has(tool.type) ? tool.type : 'other'}`);
  };
  tools.forEach((tool, i) => {
    if (tool.type === 'function') out.push(chatFunction(tool as FunctionTool));
    else if (tool.type !== 'namespace') skip(tool, `tools[${i}]`);
    else {
      (tool as NamespaceTool).tools.forEach((inner, j) => {
        if (inner.type === 'function') out.push(chatFunction(inner as FunctionTool, (tool as NamespaceTool).name));
        else skip(inner, `tools[${i}].tools[${j}]`);
      });
    }
  });
  if (hosted === 'refuse' && unusable.length > 0) {
    throw new GatewayError('invalid_request',
      `This model's backend cannot run the tools ${unusable.map((u) => u.label).join(', ')}: remove them from tools, or use a model served by a Responses API backend.`,
      { param: unusable[0].param });
  }
  return out;
}

function chatFunction(tool: FunctionTool, namespace?: string): ChatTool {
  const fn: ChatTool['function'] = { name: chatToolName(namespace, tool.name) };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.parameters) fn.parameters = tool.parameters;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

/**
 * tool_choice in chat's form, and the tools it leaves: allowed_tools becomes
 * its mode over the allowed functions only. A choice of a tool that did not
 * translate is dropped (the backend's default, auto, applies).
 */
export function chatToolChoice(choice: ToolChoice | null | undefined, tools: ChatTool[], dropped: Set<string>): { toolChoice?: unknown; tools: ChatTool[] } {
  if (choice === null || choice === undefined) return { tools };
  if (typeof choice === 'string') return { toolChoice: choice, tools };
  if (choice.type === 'function' && 'name' in choice && tools.some((t) => t.function.name === choice.name)) {
    return { toolChoice: { type: 'function', function: { name: choice.name } }, tools };
  }
  if (choice.type === 'allowed_tools' && 'mode' in choice) {
    const allowed = new Set(choice.tools.filter((t) => t.type === 'function' && t.name).map((t) => chatToolName(t.namespace, t.name!)));
    return { toolChoice: choice.mode, tools: tools.filter((t) => allowed.has(t.function.name)) };
  }
  dropped.add('tool_choice');
  return { tools };
}
