// Tools and tool_choice for a chat backend. Function tools translate one to
// one; a custom (free-form) tool becomes a function with one string argument
// (see custom-tools.ts). A namespace groups tools the client runs (the Codex
// CLI puts each MCP server's tools in one); OpenAI's model calls them by name
// plus namespace, so they become chat functions named "<namespace>__<name>"
// and are named back on the way out. `functions` is the namespace of the
// model's own tools: its calls come back without a namespace, so its tools
// keep their bare names. Tools arrive in `tools` and in `additional_tools`
// input items (the Codex CLI sends all of its own there), and all join the
// chat request. Every other tool runs on OpenAI's side (web_search,
// file_search, code_interpreter, mcp, ...): it is dropped, or refused when
// the route says so.
import { GatewayError } from '../../contract/errors';
import { customParameters } from './custom-tools';
import type { AdditionalToolsItem, CustomTool, FunctionTool, InputItem, NamespaceTool, ResponsesRequest, Tool, ToolChoice } from './types';

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** What a translated route does with a tool its chat backend cannot run. */
export type HostedTools = 'drop' | 'refuse';

/** The namespace whose tools OpenAI's model calls by their bare name. */
const DEFAULT_NAMESPACE = 'functions';

/** The chat name of a namespace's tool. Codex's MCP namespaces end in "__" ("mcp__docs__" + "search" reads as one name). */
export function chatToolName(namespace: string | null | undefined, name: string): string {
  if (!namespace || namespace === DEFAULT_NAMESPACE) return name;
  return namespace.endsWith('_') ? namespace + name : `${namespace}__${name}`;
}

/** A tool as the client named it; `custom` when its calls are free-form input. */
export interface ToolName { name: string; namespace?: string; custom?: boolean }

/** A list of tools the request offers, and where it sits (for an error's param). */
export interface ToolList { tools: readonly Tool[]; param: string }

/** Every list of tools a request offers: `tools`, then the additional_tools items of its history and its input, in order. */
export function offeredTools(req: ResponsesRequest, history: readonly InputItem[] = []): ToolList[] {
  const lists: ToolList[] = req.tools ? [{ tools: req.tools, param: 'tools' }] : [];
  const add = (items: readonly InputItem[], param: (i: number) => string) => items.forEach((item, i) => {
    if (item.type === 'additional_tools' && Array.isArray(item.tools)) lists.push({ tools: (item as AdditionalToolsItem).tools, param: param(i) });
  });
  add(history, () => 'previous_response_id');
  if (Array.isArray(req.input)) add(req.input, (i) => `input[${i}].tools`);
  return lists;
}

/** Chat name → the tool's own name and namespace, for every tool a call to it must be named back or read back: namespaced or custom. */
export function toolNames(lists: readonly ToolList[]): Map<string, ToolName> {
  const names = new Map<string, ToolName>();
  const add = (tool: Tool, namespace?: string) => {
    if (tool.type !== 'function' && tool.type !== 'custom') return;
    const name = (tool as FunctionTool | CustomTool).name;
    const entry: ToolName = { name };
    if (namespace && namespace !== DEFAULT_NAMESPACE) entry.namespace = namespace;
    if (tool.type === 'custom') entry.custom = true;
    if (entry.namespace || entry.custom) names.set(chatToolName(namespace, name), entry);
  };
  for (const { tools } of lists) {
    for (const tool of tools) {
      if (tool.type === 'namespace') for (const inner of (tool as NamespaceTool).tools) add(inner, (tool as NamespaceTool).name);
      else add(tool);
    }
  }
  return names;
}

// OpenAI's tool types, so a dropped one is named by its type; any other is "other" (names feed a metric label).
const TOOL_TYPES = new Set(['file_search', 'computer', 'computer_use_preview', 'web_search', 'web_search_preview', 'web_search_2025_08_26',
  'web_search_preview_2025_03_11', 'mcp', 'code_interpreter', 'image_generation', 'local_shell', 'shell', 'tool_search', 'apply_patch', 'programmatic_tool_calling']);

/** The chat tools for a request's tools; what no chat backend runs is named in `dropped`, or refused. */
export function chatTools(lists: readonly ToolList[], hosted: HostedTools, dropped: Set<string>): ChatTool[] {
  const out: ChatTool[] = [];
  const unusable: { label: string; param: string }[] = [];
  const translate = (tool: Tool, param: string, namespace?: string) => {
    if (tool.type === 'function' || tool.type === 'custom') {
      out.push(chatFunction(tool as FunctionTool | CustomTool, namespace));
      return;
    }
    unusable.push({ label: tool.name ? `${tool.type} "${tool.name}"` : tool.type, param });
    dropped.add(`tools:${TOOL_TYPES.has(tool.type) ? tool.type : 'other'}`);
  };
  for (const { tools, param } of lists) {
    tools.forEach((tool, i) => {
      if (tool.type !== 'namespace') translate(tool, `${param}[${i}]`);
      else (tool as NamespaceTool).tools.forEach((inner, j) => translate(inner, `${param}[${i}].tools[${j}]`, (tool as NamespaceTool).name));
    });
  }
  if (hosted === 'refuse' && unusable.length > 0) {
    throw new GatewayError('invalid_request',
      `This model's backend cannot run the tools ${unusable.map((u) => u.label).join(', ')}: remove them from tools, or use a model served by a Responses API backend.`,
      { param: unusable[0].param });
  }
  return out;
}

function chatFunction(tool: FunctionTool | CustomTool, namespace?: string): ChatTool {
  const fn: ChatTool['function'] = { name: chatToolName(namespace, tool.name) };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.type === 'custom') fn.parameters = customParameters((tool as CustomTool).format);
  else {
    if ((tool as FunctionTool).parameters) fn.parameters = (tool as FunctionTool).parameters!;
    if (typeof (tool as FunctionTool).strict === 'boolean') fn.strict = (tool as FunctionTool).strict!;
  }
  return { type: 'function', function: fn };
}

const isCallable = (type: string): boolean => type === 'function' || type === 'custom';

/**
 * tool_choice in chat's form, and the tools it leaves: a named function or
 * custom tool becomes chat's named function; allowed_tools becomes its mode
 * over the allowed tools only. A choice of a tool that did not translate is
 * dropped (the backend's default, auto, applies).
 */
export function chatToolChoice(choice: ToolChoice | null | undefined, tools: ChatTool[], dropped: Set<string>): { toolChoice?: unknown; tools: ChatTool[] } {
  if (choice === null || choice === undefined) return { tools };
  if (typeof choice === 'string') return { toolChoice: choice, tools };
  if (isCallable(choice.type) && 'name' in choice && tools.some((t) => t.function.name === choice.name)) {
    return { toolChoice: { type: 'function', function: { name: choice.name } }, tools };
  }
  if (choice.type === 'allowed_tools' && 'mode' in choice) {
    const allowed = new Set(choice.tools.filter((t) => isCallable(t.type) && t.name).map((t) => chatToolName(t.namespace, t.name!)));
    return { toolChoice: choice.mode, tools: tools.filter((t) => allowed.has(t.function.name)) };
  }
  dropped.add('tool_choice');
  return { tools };
}
