// A Messages request shaped as Claude Code sends one to POST /v1/messages?beta=true:
// system as text blocks with cache breakpoints, two dozen tools with JSON
// schemas, thinking and tool results in the history, a system message between
// turns, adaptive thinking, context management, output config, a 32k cap.

const TOOL_NAMES = [
  'Task', 'Bash', 'Glob', 'Grep', 'ExitPlanMode', 'Read', 'Edit', 'Write', 'NotebookEdit', 'WebFetch', 'TodoWrite', 'WebSearch',
  'BashOutput', 'KillShell', 'Skill', 'SlashCommand', 'AskUserQuestion', 'EnterPlanMode', 'ListMcpResourcesTool',
  'ReadMcpResourceTool', 'mcp__ide__getDiagnostics', 'mcp__ide__executeCode', 'LSP', 'MultiEdit',
];

export const CLAUDE_CODE_TOOLS = TOOL_NAMES.map((name, i) => ({
  name,
  description: `The ${name} tool. Use it when the task needs it.`,
  input_schema: {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      [`arg_${i}`]: { type: 'string', description: `What ${name} acts on` },
      timeout: { type: 'number', description: 'Optional timeout in milliseconds' },
    },
    required: [`arg_${i}`],
    additionalProperties: false,
  },
  // Claude Code marks the last tool as a cache breakpoint.
  ...(i === TOOL_NAMES.length - 1 ? { cache_control: { type: 'ephemeral' } } : {}),
}));

export function claudeCodeRequest(): Record<string, unknown> {
  return {
    model: 'claude-sonnet-4-5-20250929',
    max_tokens: 32000,
    stream: true,
    temperature: 1,
    metadata: { user_id: 'user_0f3c_account_8d1e_session_42' },
    system: [
      { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'You are an interactive CLI tool that helps users with software engineering tasks.', cache_control: { type: 'ephemeral' } },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-reminder>\nAs you answer, use the context below.\n</system-reminder>' },
          { type: 'text', text: 'Fix the failing test in src/sum.ts', cache_control: { type: 'ephemeral' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should read the file first.', signature: 'EqQBCkYIBxgCKkB...' },
          { type: 'text', text: "I'll read the file." },
          { type: 'tool_use', id: 'toolu_01A', name: 'Read', input: { file_path: '/repo/src/sum.ts' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01A', content: [{ type: 'text', text: '1\texport const sum = (a, b) => a - b;' }], cache_control: { type: 'ephemeral' } },
        ],
      },
      { role: 'system', content: 'The user switched to plan mode.' },
      {
        role: 'assistant',
        content: [
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix...' },
          { type: 'tool_use', id: 'toolu_01B', name: 'Bash', input: { command: 'npm test', timeout: 120000 } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01B', content: 'Exit code 1\nFAIL src/sum.test.ts', is_error: true },
          { type: 'text', text: 'Keep going.' },
        ],
      },
    ],
    tools: CLAUDE_CODE_TOOLS,
    tool_choice: { type: 'auto' },
    thinking: { type: 'adaptive' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    output_config: { effort: 'high' },
  };
}
