// Responses API requests as real clients send them, and the chat-completions
// answers and chunks a vLLM-like backend sends back, for the translation tests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResponseMeta, ResponsesRequest } from '../../src/protocols/responses/types';
import { FIXTURES } from './agent-fixtures';

const SHELL_PARAMS = {
  type: 'object',
  properties: {
    command: { type: 'array', items: { type: 'string' }, description: 'The command to execute' },
    workdir: { type: 'string', description: 'The working directory to execute the command in' },
    timeout_ms: { type: 'number', description: 'The timeout for the command in milliseconds' },
  },
  required: ['command'],
  additionalProperties: false,
};

/** A first turn as the Codex CLI sends it in its default configuration, pointed at a model it does not know. */
export const codexRequest = (): ResponsesRequest => ({
  model: 'qwen3-coder',
  instructions: [
    'You are a coding agent running in the Codex CLI, a terminal-based coding assistant.',
    '',
    '## How you work',
    '- Read the repository before you change it; keep changes small and focused.',
    '- Use the shell tool to run commands; prefer rg over grep.',
    '- Before you finish, run the tests that cover what you changed.',
  ].join('\n'),
  input: [
    { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>Approval policy: on-request. Sandbox: workspace-write.</permissions instructions>' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>\n  <cwd>/home/dev/app</cwd>\n  <shell>bash</shell>\n</environment_context>' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files in this repository.' }] },
  ],
  tools: [
    { type: 'function', name: 'shell', description: 'Runs a shell command and returns its output.', strict: false, parameters: SHELL_PARAMS },
    {
      type: 'function', name: 'update_plan', description: 'Updates the task plan.', strict: false,
      parameters: { type: 'object', properties: { plan: { type: 'array', items: { type: 'object', properties: { step: { type: 'string' }, status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] } } } } }, required: ['plan'], additionalProperties: false },
    },
    { type: 'web_search', external_web_access: false },
    {
      type: 'namespace', name: 'mcp__docs__', description: 'Tools in the mcp__docs__ namespace.',
      tools: [{ type: 'function', name: 'search', description: 'Searches the project documentation.', strict: false, parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } }],
    },
  ],
  tool_choice: 'auto',
  parallel_tool_calls: true,
  reasoning: { effort: 'medium', summary: 'auto' },
  store: false,
  stream: true,
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: '0199a1c2-7d3e-7f10-9a2b-3c4d5e6f7a8b',
  client_metadata: { 'x-codex-installation-id': 'b1d2c3e4-0000-4000-8000-000000000001' },
});

/** Codex's second turn: the first turn's items sent back (store is false), then the tool's result. */
export const codexSecondTurn = (): ResponsesRequest => {
  const first = codexRequest();
  return {
    ...first,
    input: [
      ...(first.input as object[]),
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: '**Listing files** I will run ls.' }], content: null, encrypted_content: null },
      { type: 'function_call', id: 'fc_1', name: 'shell', arguments: '{"command":["ls"]}', call_id: 'call_1' },
      { type: 'function_call', id: 'fc_2', name: 'search', namespace: 'mcp__docs__', arguments: '{"query":"layout"}', call_id: 'call_2' },
      { type: 'function_call_output', call_id: 'call_1', output: 'README.md\nsrc\n' },
      { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'src/ holds the code.' }] },
    ] as ResponsesRequest['input'],
  };
};

/** A run of the OpenAI Agents SDK: an agent with instructions, one strict function tool, model settings. */
export const agentsRequest = (): ResponsesRequest => ({
  model: 'llama-3.3-70b',
  instructions: 'You are a weather assistant. Answer in one sentence.',
  input: [{ role: 'user', content: 'What is the weather in Paris?' }],
  include: [],
  tools: [{
    type: 'function', name: 'get_weather', description: 'Gets the current weather for a city.', strict: true,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  }],
  temperature: 0.3,
  max_output_tokens: 512,
  truncation: 'disabled',
  text: { format: { type: 'text' } },
  store: true,
  stream: false,
});

/**
 * A request the Codex CLI sent, captured (test/fixtures/codex-responses-request*.json): `default` for its own
 * model (its tools in an additional_tools item, the shell through the custom tool `exec`), `named-model` for a
 * model it has no metadata for (function tools); `turn2` adds the tool call and its result.
 */
export const capturedCodexRequest = (model: 'default' | 'named-model', turn: 1 | 2 = 1): ResponsesRequest => {
  const name = `codex-responses-request${model === 'named-model' ? '-named-model' : ''}${turn === 2 ? '-turn2' : ''}.json`;
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
};

/** Item ids numbered per kind (msg_1, fc_1, ...), so the JSON and streamed answers can be compared whole. */
export function countingIds(): (prefix: string) => string {
  const counts = new Map<string, number>();
  return (prefix) => {
    const n = (counts.get(prefix) ?? 0) + 1;
    counts.set(prefix, n);
    return `${prefix}_${n}`;
  };
}

export const metaFor = (request: ResponsesRequest): ResponseMeta =>
  ({ id: 'resp_test', createdAt: 1760000000, model: request.model, request, newId: countingIds(), now: () => 1760000001000 });

const CHUNK = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1760000000, model: 'Qwen/Qwen3-Coder' };

/** A chat chunk with one choice's delta, as vLLM streams it. */
export const chunk = (delta: object, finish_reason: string | null = null) =>
  ({ ...CHUNK, choices: [{ index: 0, delta, logprobs: null, finish_reason }] });

/** The usage-only last chunk (stream_options.include_usage). */
export const usageChunk = (prompt: number, completion: number, details: object = {}) =>
  ({ ...CHUNK, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...details } });

/** A chat.completion JSON answer. */
export const completion = (message: object, finish_reason: string, usage?: object) => ({
  id: 'chatcmpl-2', object: 'chat.completion', created: 1760000000, model: 'Qwen/Qwen3-Coder',
  choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, logprobs: null, finish_reason }],
  ...(usage && { usage }),
});
