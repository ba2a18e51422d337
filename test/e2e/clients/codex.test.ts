// The real Codex CLI (`codex exec`, offline) through the gateway, as an
// operator would point it there: a custom model provider with
// wire_api = "responses" and a gateway key, its default configuration
// otherwise. The scripted backend asks for one shell command, then answers
// with what it printed: the command runs in the working directory and the
// final answer is printed, whether the gateway translates for a chat-only
// backend or relays to one that serves the Responses API.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentBackend, type AgentBackend } from '../../support/agent-backend';
import { runCodexExec } from '../../support/agent-cli';
import { FINAL_PREFIX } from '../../support/agent-script';
import { makeKey, startGateway, type TestGateway } from '../../support/gateway';

const BACKENDS: Array<[string, string[], string]> = [
  ['a translated (chat-only)', ['chat'], '/v1/chat/completions'],
  ['a native Responses', ['chat', 'responses'], '/v1/responses'],
];

describe.each(BACKENDS)('Codex CLI through the gateway to %s backend', (_kind, apis, backendPath) => {
  let backend: AgentBackend;
  let gw: TestGateway;
  let cwd: string;
  let token: string;
  const key = makeKey('codex', { org: 'dev' });

  beforeEach(async () => {
    cwd = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-codex-gw-')));
    token = `sluice-${randomBytes(6).toString('hex')}`;
    backend = await startAgentBackend({ command: `echo ${token} > marker.txt && cat marker.txt` });
    gw = await startGateway({
      keys: [key.entry], orgs: { dev: {} },
      upstreams: { agent: { url: backend.base, format: 'openai', apis } },
      routes: [{ model: '*', upstream: 'agent' }],
    });
  });
  afterEach(async () => {
    await gw?.close();
    await backend?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it.each([['its default model', undefined], ['a model the gateway names', 'qwen-coder']])('runs the command the backend asks for and prints the answer, with %s', async (_what, model) => {
    const result = await runCodexExec({ baseUrl: `${gw.url}/v1`, apiKey: key.key, prompt: 'Write the marker file, then tell me what it says.', cwd, model, timeoutMs: 15_000 });
    expect({ code: result.code, timedOut: result.timedOut, stderr: result.code === 0 ? '' : result.stderr }).toEqual({ code: 0, timedOut: false, stderr: '' });
    expect(readFileSync(join(cwd, 'marker.txt'), 'utf8')).toBe(`${token}\n`);
    expect(result.stdout).toContain(FINAL_PREFIX);
    expect(result.stdout).toContain(token);
    // Two turns reached the backend in the protocol it serves: the call, then the answer to its output.
    expect(backend.requests.map((r) => `${r.method} ${r.url.split('?')[0]}`)).toEqual([`POST ${backendPath}`, `POST ${backendPath}`]);
    expect(JSON.stringify(backend.requests[1].body)).toContain(token);
    if (model !== undefined) expect(backend.requests.map((r) => r.body.model)).toEqual([model, model]);
    // The default model's code-mode tool (custom `exec`) reaches a chat backend as a function of one `input` string.
    if (model === undefined && apis.length === 1) {
      expect(backend.requests[0].body.tools).toEqual(expect.arrayContaining([{ type: 'function', function: expect.objectContaining({ name: 'exec', parameters: expect.objectContaining({ required: ['input'] }) }) }]));
    }
  });
});
