// The two-turn script the agent backends play, whatever the wire protocol:
// while the conversation holds no tool result, ask for one tool call (the
// `tool` named in the script when it is offered, as an MCP server's tool is;
// else the Read tool on `readPath` when it is offered, else the client's
// shell tool running `command`); once a result is back, answer with text that quotes
// it, so a test proves the tool ran and its output reached the model.
// Claude Code's tool search offers an MCP tool only once the model has
// loaded it: then the script's first turn is ToolSearch ("select:<tool>"),
// and the tool is called when its result is back.
// A request that offers no tool we know (a title or quota call) gets a
// short plain answer. With `thinking` in the script, a request that turns
// thinking on gets it as the answer's reasoning first.

export interface AgentScript {
  /** The shell command asked for when the client offers a shell tool. */
  command: string;
  /** The absolute path the Read tool is asked to read, when it is offered. */
  readPath?: string;
  /** The reasoning an answer starts with when the request turns thinking on; unset: never any. */
  thinking?: string;
  /** A function tool called by name (and namespace, as Responses groups an MCP server's tools), with these arguments, when the request offers it (first of all). */
  tool?: { name: string; namespace?: string; args: Record<string, unknown> };
}

/** A tool the request offers, as the protocol names it. */
export interface ToolOffer {
  name: string;
  /** function: JSON arguments; custom: free text (Codex's code-mode `exec`); local_shell: Responses' built-in. */
  kind: 'function' | 'custom' | 'local_shell';
  /** The Responses namespace the tool sits in, if any. */
  namespace?: string;
}

/** What the script reads from a request, decoded by each protocol. */
export interface TurnView {
  tools: ToolOffer[];
  /** The text of the latest tool result, when the conversation has one. */
  toolResult?: string;
  /** The name of the tool that gave that result (Messages and chat: the call it answers). */
  toolResultOf?: string;
  /** The request turns thinking on (chat: chat_template_kwargs.enable_thinking; Messages: thinking enabled or adaptive). */
  thinking?: boolean;
}

export type ScriptStep = (
  | { kind: 'call'; preamble: string; name: string; namespace?: string; tool: ToolOffer['kind']; args: Record<string, unknown>; input: string }
  | { kind: 'answer'; text: string }
) & { thinking?: string };

export const PREAMBLE = 'Running the tool first.';
export const FINAL_PREFIX = 'The tool returned:';
export const PLAIN_ANSWER = 'Sluice agent test';
/** Claude Code's tool that loads a deferred tool (an MCP server's, with tool search on) by name. */
export const TOOL_SEARCH = 'ToolSearch';

/** The answer to a turn that carries a tool result: its text, quoted. */
export const finalAnswer = (toolResult: string): string => `${FINAL_PREFIX}\n${toolResult.trim()}`;

// Codex's code mode runs JavaScript whose nested tools include exec_command.
const codeModeInput = (command: string): string =>
  `const r = await tools.exec_command({ cmd: ${JSON.stringify(command)} });\ntext(r.output);`;

/** The shell tools each client version has offered, with the arguments each takes. */
const SHELL_FUNCTIONS: Array<[string, (command: string) => Record<string, unknown>]> = [
  ['exec_command', (cmd) => ({ cmd })],
  ['shell_command', (command) => ({ command })],
  ['shell', (command) => ({ command: ['bash', '-lc', command] })],
  ['Bash', (command) => ({ command })],
];

function call(name: string, tool: ToolOffer['kind'], args: Record<string, unknown>, input = JSON.stringify(args)): ScriptStep {
  return { kind: 'call', preamble: PREAMBLE, name, tool, args, input };
}

export function nextStep(script: AgentScript, view: TurnView): ScriptStep {
  const step = scriptStep(script, view);
  return script.thinking !== undefined && view.thinking === true ? { ...step, thinking: script.thinking } : step;
}

function scriptStep(script: AgentScript, view: TurnView): ScriptStep {
  const { tool } = script;
  const toolOffered = tool !== undefined && view.tools.some((t) => t.name === tool.name && t.namespace === tool.namespace && t.kind === 'function');
  const searched = view.toolResultOf === TOOL_SEARCH;
  if (view.toolResult !== undefined && !(searched && toolOffered)) return { kind: 'answer', text: finalAnswer(view.toolResult) };
  const offered = (name: string, kind: ToolOffer['kind']) => view.tools.some((t) => t.name === name && t.kind === kind);
  if (tool !== undefined && toolOffered) {
    return { ...call(tool.name, 'function', tool.args), ...(tool.namespace === undefined ? {} : { namespace: tool.namespace }) };
  }
  if (tool !== undefined && offered(TOOL_SEARCH, 'function')) return call(TOOL_SEARCH, 'function', { query: `select:${tool.name}`, max_results: 1 });
  if (script.readPath !== undefined && offered('Read', 'function')) return call('Read', 'function', { file_path: script.readPath });
  for (const [name, args] of SHELL_FUNCTIONS) {
    if (offered(name, 'function')) return call(name, 'function', args(script.command));
  }
  if (view.tools.some((t) => t.kind === 'local_shell')) {
    return call('local_shell', 'local_shell', { type: 'exec', command: ['bash', '-lc', script.command], timeout_ms: 10_000 });
  }
  if (offered('exec', 'custom')) return call('exec', 'custom', {}, codeModeInput(script.command));
  return { kind: 'answer', text: PLAIN_ANSWER };
}

/** Text out of a tool result's content: a string, or parts carrying `text`. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
}

/** A usage-ish token count for a request body, enough for count_tokens and usage fields. */
export const roughTokens = (body: unknown): number => Math.max(1, Math.ceil(JSON.stringify(body ?? '').length / 4));

/** Text cut into the small pieces a stream's deltas carry. */
export const pieces = (text: string): string[] => text.match(/[\s\S]{1,8}/g) ?? [''];

/** One server-sent event: an `event:` line when the protocol names its events, then the JSON data. */
export const sseFrame = (data: unknown, event?: string): string =>
  `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

/** A protocol's answer to one turn, both ways: the JSON body and the SSE frames of the stream. */
export interface WireAnswer {
  json: unknown;
  frames: string[];
}
