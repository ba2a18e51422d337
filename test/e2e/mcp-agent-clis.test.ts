// The real agent CLIs call an MCP server's tool through the gateway, their
// model traffic through the gateway too, as an operator would set them up:
// Claude Code with `--mcp-config` naming an http server and the gateway key
// in its Authorization header, the Codex CLI with `[mcp_servers.<name>]`,
// a url and `bearer_token_env_var`. The scripted model backend asks for the
// server's `headers` tool in its first turn; the tool's answer (a digest of
// the credential the server received, which only the server can make) must
// reach the backend in the next turn, on a backend the request is translated
// for and on one that serves the client's protocol itself. A key refused
// the server (no MCP access, or not a key at all) leaves the CLI its task
// without the server's tools: no hang, nothing sent on to the server.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { AGENT_MODEL } from '../support/agent-backend';
import { chatView } from '../support/agent-chat';
import { CODEX_KEY_ENV, runClaudePrint, runCodexExec, type AgentRunResult } from '../support/agent-cli';
import { messagesView } from '../support/agent-messages';
import { responsesView } from '../support/agent-responses';
import { FINAL_PREFIX, TOOL_SEARCH, type AgentScript, type TurnView } from '../support/agent-script';
import { makeKey } from '../support/gateway';
import { sha256, startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { NATIVE, startMessagesStack, TRANSLATED, type MessagesStack } from '../support/messages-stack';

/** The server's credential, held by the gateway alone. */
const SERVER_TOKEN = `mcp-upstream-${randomBytes(12).toString('hex')}`;
/** The key may call two of the server's five tools. */
const user = makeKey('mcp-agent', { mcp: { servers: ['tools'], tools: ['tools/headers', 'tools/add'] } });
/** A key with no MCP access: every /mcp/ path is a 404 to it. */
const noMcp = makeKey('no-mcp');
/** The environment variable Claude Code's --mcp-config reads the gateway key from: the one Codex's model provider reads it from too. */
const KEY_VAR = CODEX_KEY_ENV;
/** The variable Codex's MCP server reads its bearer token from when it is not the provider's key. */
const MCP_KEY_VAR = 'SLUICE_MCP_KEY';
const RESPONSES = 'codex-agent';
const RUN_MS = 60_000;
const TEST_MS = 90_000;

const VIEWS: Record<string, (body: any) => TurnView> = {
  '/v1/messages': messagesView,
  '/v1/responses': responsesView,
  '/v1/chat/completions': chatView,
};

interface Stack extends MessagesStack { lines: string[] }

describe('MCP tools from the agent CLIs, through the gateway', () => {
  let mcp: TestMcpServer;
  let cwd: string;
  let stack: Stack | undefined;

  beforeAll(async () => {
    cwd = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-mcp-cli-')));
    mcp = await startMcpServer();
  });
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });
  afterAll(async () => {
    await mcp.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  /** The gateway with the MCP server at /mcp/tools and three model routes to a backend playing `tool`'s script. */
  async function startStack(tool: AgentScript['tool']): Promise<Stack> {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const messages = await startMessagesStack({ command: 'true', tool }, {
      config: (backend) => ({
        keys: [user.entry, noMcp.entry],
        upstreams: { responses: { url: backend.base, format: 'openai', apis: ['chat', 'responses'] } },
        routes: [{ model: RESPONSES, upstream: 'responses', upstreamModel: AGENT_MODEL }],
        mcp: { servers: { tools: { url: mcp.url, headers: { Authorization: `Bearer ${SERVER_TOKEN}` } } } },
      }),
      gateway: { logger },
    });
    return { ...messages, lines };
  }

  /**
   * What every run must show: the server's tools the key may call offered to the model (`offered`), the tool's answer in the
   * turn after its call (the last of `turns`), the credential where it belongs, the call in the access log.
   */
  function expectToolRoundTrip(s: Stack, result: AgentRunResult, run: { backendPath: string; offered: string[]; turns: number; mcpFrom: number }): void {
    expect({ code: result.code, timedOut: result.timedOut }).toEqual({ code: 0, timedOut: false });
    const digest = sha256(`Bearer ${SERVER_TOKEN}`);
    const view = VIEWS[run.backendPath];
    // Every model turn went through the gateway; the last answers the tool's result.
    expect(s.backend.requests.map((r) => `${r.method} ${r.url.split('?')[0]}`)).toEqual(Array(run.turns).fill(`POST ${run.backendPath}`));
    const views = s.backend.requests.map((r) => view(r.body));
    expect(views[0].toolResult).toBeUndefined();
    // The key's two tools reached the model, and none of the server's three others: in the tool list, or (tool search) in the list of deferred tools.
    const fromServer = views[0].tools.filter((t) => t.namespace === 'mcp__tools' || t.name.startsWith('mcp__tools__')).map((t) => t.name);
    // With tool search, the tool is loaded by name first.
    if (run.turns === 3) expect(views[1].toolResultOf).toBe(TOOL_SEARCH);
    if (run.turns === 2) expect(fromServer.sort()).toEqual(run.offered);
    else expect([...new Set(JSON.stringify(s.backend.requests[0].body).match(/mcp__tools__[a-z_]+/g))].sort()).toEqual(run.offered);
    // The server's own answer is the next turn's tool result: the digest of the credential it got, the gateway's and not the key.
    const answered = views.at(-1)!;
    expect(answered.toolResult).toContain(digest);
    expect(answered.toolResult).not.toContain(sha256(`Bearer ${user.key}`));
    expect(result.stdout).toContain(FINAL_PREFIX);
    expect(result.stdout).toContain(digest);
    // Every request of the run reached the server with the gateway's credential, never the client's key.
    const seen = mcp.requests.slice(run.mcpFrom);
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen.map((r) => r.headers.authorization)).toEqual(seen.map(() => `Bearer ${SERVER_TOKEN}`));
    expect(JSON.stringify(seen)).not.toContain(user.key);
    // The credential never reached the CLI, the model backend or the log; the key never reached the backend or the log.
    const backendText = JSON.stringify(s.backend.requests);
    for (const text of [result.stdout, result.stderr, backendText, ...s.lines]) expect(text).not.toContain(SERVER_TOKEN);
    for (const text of [backendText, ...s.lines]) expect(text).not.toContain(user.key);
    const access = s.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(access.filter((l) => l.protocol === 'mcp' && l.method === 'tools/call')).toEqual([
      expect.objectContaining({ keyId: 'mcp-agent', server: 'tools', tool: 'headers', status: 200, outcome: 'ok' }),
    ]);
    expect(access.filter((l) => l.protocol !== 'mcp').map((l) => [l.keyId, l.status])).toEqual(Array(run.turns).fill(['mcp-agent', 200]));
  }

  /** Claude Code with the server in --mcp-config, the MCP key (`mcpKey`) read from the environment. */
  const runClaude = (s: Stack, model: string, mcpKey: string, env: Record<string, string> = {}) => runClaudePrint({
    baseUrl: s.gw.url, apiKey: user.key, model, cwd, timeoutMs: RUN_MS,
    prompt: 'Call the headers tool of the tools server and tell me what it returned.',
    mcpConfig: { mcpServers: { tools: { type: 'http', url: `${s.gw.url}/mcp/tools`, headers: { Authorization: `Bearer \${${KEY_VAR}}` } } } },
    allowedTools: ['mcp__tools__headers'],
    env: { [KEY_VAR]: mcpKey, ...env },
  });

  /**
   * `codex exec` with the server in config.toml, its bearer token the provider's key (as docs/mcp.md shows), or `mcpKey` in a
   * variable of its own. `codex exec` cannot ask, so the tool is approved (else it is answered to the model as refused, unless the sandbox is off).
   */
  const runCodex = (s: Stack, model: string, mcpKey?: string) => runCodexExec({
    baseUrl: `${s.gw.url}/v1`, apiKey: user.key, model, cwd, timeoutMs: RUN_MS, fullAccess: false,
    prompt: 'Call the headers tool of the tools server and tell me what it returned.',
    config: ['', '[mcp_servers.tools]', `url = "${s.gw.url}/mcp/tools"`, `bearer_token_env_var = "${mcpKey === undefined ? KEY_VAR : MCP_KEY_VAR}"`,
      '', '[mcp_servers.tools.tools.headers]', 'approval_mode = "approve"', ''].join('\n'),
    env: mcpKey === undefined ? {} : { [MCP_KEY_VAR]: mcpKey },
  });

  // Tool search (Claude Code's default) holds MCP tools back until the model loads one: three turns (ToolSearch, the tool, the answer).
  describe.each([
    ['off', 'translated', TRANSLATED, '/v1/chat/completions'], ['off', 'native', NATIVE, '/v1/messages'],
    ['on', 'translated', TRANSLATED, '/v1/chat/completions'], ['on', 'native', NATIVE, '/v1/messages'],
  ])('Claude Code (claude -p), tool search %s, %s backend', (toolSearch, _mode, model, backendPath) => {
    it('calls the server\'s tool through /mcp/tools and sends its answer to the model', async () => {
      stack = await startStack({ name: 'mcp__tools__headers', args: {} });
      const mcpFrom = mcp.requests.length;
      const result = await runClaude(stack, model, user.key, toolSearch === 'off' ? { ENABLE_TOOL_SEARCH: 'false' } : {});
      const turns = toolSearch === 'off' ? 2 : 3;
      expectToolRoundTrip(stack, result, { backendPath, offered: ['mcp__tools__add', 'mcp__tools__headers'], turns, mcpFrom });
    }, TEST_MS);
  });

  // Codex groups an MCP server's tools in a Responses namespace, mcp__<server>; a chat backend gets them as functions named <namespace>__<tool>.
  describe.each([
    ['translated', TRANSLATED, '/v1/chat/completions', { name: 'mcp__tools__headers', args: {} }, ['mcp__tools__add', 'mcp__tools__headers']],
    ['native', RESPONSES, '/v1/responses', { name: 'headers', namespace: 'mcp__tools', args: {} }, ['add', 'headers']],
  ] as const)('Codex CLI (codex exec), %s backend', (_mode, model, backendPath, tool, offered) => {
    it('calls the server\'s tool through /mcp/tools and sends its answer to the model', async () => {
      stack = await startStack(tool);
      const mcpFrom = mcp.requests.length;
      const result = await runCodex(stack, model);
      expectToolRoundTrip(stack, result, { backendPath, offered: [...offered], turns: 2, mcpFrom });
    }, TEST_MS);
  });

  describe.each([
    ['a key with no MCP access', noMcp.key, 404, 'not_found'],
    ['no key the gateway knows', `sk-test-${randomBytes(16).toString('hex')}`, 401, 'unauthorized'],
  ])('refused the server (%s)', (_what, mcpKey, status, outcome) => {
    it.each([['Claude Code', 'claude'], ['the Codex CLI', 'codex']])('%s finishes its task without the server\'s tools', async (_name, cli) => {
      stack = await startStack({ name: 'mcp__tools__headers', args: {} });
      const mcpFrom = mcp.requests.length;
      const result = cli === 'claude' ? await runClaude(stack, NATIVE, mcpKey, { ENABLE_TOOL_SEARCH: 'false' }) : await runCodex(stack, RESPONSES, mcpKey);
      expect({ code: result.code, timedOut: result.timedOut }).toEqual({ code: 0, timedOut: false });
      // The model was offered none of the server's tools and answered in two turns; the server saw nothing.
      expect(stack.backend.requests).toHaveLength(2);
      expect(JSON.stringify(stack.backend.requests)).not.toContain('mcp__tools');
      expect(mcp.requests.length).toBe(mcpFrom);
      const access = stack.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && l.protocol === 'mcp');
      expect(access.length).toBeGreaterThanOrEqual(1);
      expect(access.map((l) => [l.status, l.outcome])).toEqual(access.map(() => [status, outcome]));
    }, TEST_MS);
  });
});
