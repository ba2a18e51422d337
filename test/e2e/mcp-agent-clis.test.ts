// The real agent CLIs call an MCP server's tool through the gateway, their
// model traffic through the gateway too, as an operator would set them up:
// Claude Code with `--mcp-config` naming an http server and the gateway key
// in its Authorization header, the Codex CLI with `[mcp_servers.<name>]`,
// a url and `bearer_token_env_var`. The scripted model backend asks for the
// server's `headers` tool in its first turn; the tool's answer (a digest of
// the credential the server received, which only the server can make) must
// reach the backend in the next turn, on a backend the request is translated
// for and on one that serves the client's protocol itself.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { AGENT_MODEL } from '../support/agent-backend';
import { chatView } from '../support/agent-chat';
import { runClaudePrint, runCodexExec, type AgentRunResult } from '../support/agent-cli';
import { messagesView } from '../support/agent-messages';
import { responsesView } from '../support/agent-responses';
import { FINAL_PREFIX, type AgentScript, type TurnView } from '../support/agent-script';
import { makeKey } from '../support/gateway';
import { sha256, startMcpServer, type TestMcpServer } from '../support/mcp-server';
import { NATIVE, startMessagesStack, TRANSLATED, type MessagesStack } from '../support/messages-stack';

/** The server's credential, held by the gateway alone. */
const SERVER_TOKEN = `mcp-upstream-${randomBytes(12).toString('hex')}`;
/** The key may call two of the server's five tools. */
const user = makeKey('mcp-agent', { mcp: { servers: ['tools'], tools: ['tools/headers', 'tools/add'] } });
/** The environment variable the CLIs read the gateway key from for the MCP server. */
const KEY_VAR = 'SLUICE_KEY';
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
        keys: [user.entry],
        upstreams: { responses: { url: backend.base, format: 'openai', apis: ['chat', 'responses'] } },
        routes: [{ model: RESPONSES, upstream: 'responses', upstreamModel: AGENT_MODEL }],
        mcp: { servers: { tools: { url: mcp.url, headers: { Authorization: `Bearer ${SERVER_TOKEN}` } } } },
      }),
      gateway: { logger },
    });
    return { ...messages, lines };
  }

  /** What every run must show: the tool's answer in the next turn, the credential where it belongs, the call in the access log. */
  function expectToolRoundTrip(s: Stack, result: AgentRunResult, backendPath: string, offered: string[], mcpFrom: number): void {
    expect({ code: result.code, timedOut: result.timedOut }).toEqual({ code: 0, timedOut: false });
    const digest = sha256(`Bearer ${SERVER_TOKEN}`);
    const view = VIEWS[backendPath];
    // Two model turns, both through the gateway: the tool call, then the answer to its result.
    expect(s.backend.requests.map((r) => `${r.method} ${r.url.split('?')[0]}`)).toEqual([`POST ${backendPath}`, `POST ${backendPath}`]);
    const [first, second] = s.backend.requests.map((r) => view(r.body));
    // The key's two tools reached the model's tool list, and none of the server's three others.
    const fromServer = first.tools.filter((t) => t.namespace === 'mcp__tools' || t.name.startsWith('mcp__tools__'));
    expect(fromServer.map((t) => t.name).sort()).toEqual(offered);
    expect(first.toolResult).toBeUndefined();
    // The server's own answer is the next turn's tool result: the digest of the credential it got, the gateway's and not the key.
    expect(second.toolResult).toContain(digest);
    expect(second.toolResult).not.toContain(sha256(`Bearer ${user.key}`));
    expect(result.stdout).toContain(FINAL_PREFIX);
    expect(result.stdout).toContain(digest);
    // Every request of the run reached the server with the gateway's credential, never the client's key.
    const seen = mcp.requests.slice(mcpFrom);
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
    expect(access.filter((l) => l.protocol !== 'mcp').map((l) => [l.keyId, l.status])).toEqual([['mcp-agent', 200], ['mcp-agent', 200]]);
  }

  describe.each([['translated', TRANSLATED, '/v1/chat/completions'], ['native', NATIVE, '/v1/messages']])('Claude Code (claude -p), %s backend', (_mode, model, backendPath) => {
    it('calls the server\'s tool through /mcp/tools and sends its answer to the model', async () => {
      stack = await startStack({ name: 'mcp__tools__headers', args: {} });
      const mcpFrom = mcp.requests.length;
      const mcpConfig = { mcpServers: { tools: { type: 'http', url: `${stack.gw.url}/mcp/tools`, headers: { Authorization: `Bearer \${${KEY_VAR}}` } } } };
      const result = await runClaudePrint({
        baseUrl: stack.gw.url, apiKey: user.key, model, cwd, timeoutMs: RUN_MS,
        prompt: 'Call the headers tool of the tools server and tell me what it returned.',
        mcpConfig, allowedTools: ['mcp__tools__headers'],
        // Tool search would hold MCP tools back until the model searched for them: off, the tool is offered in the first turn.
        env: { [KEY_VAR]: user.key, ENABLE_TOOL_SEARCH: 'false' },
      });
      expectToolRoundTrip(stack, result, backendPath, ['mcp__tools__add', 'mcp__tools__headers'], mcpFrom);
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
      const config = ['', '[mcp_servers.tools]', `url = "${stack.gw.url}/mcp/tools"`, `bearer_token_env_var = "${KEY_VAR}"`, ''].join('\n');
      const result = await runCodexExec({
        baseUrl: `${stack.gw.url}/v1`, apiKey: user.key, model, cwd, timeoutMs: RUN_MS,
        prompt: 'Call the headers tool of the tools server and tell me what it returned.',
        config, env: { [KEY_VAR]: user.key },
      });
      expectToolRoundTrip(stack, result, backendPath, [...offered], mcpFrom);
    }, TEST_MS);
  });
});
