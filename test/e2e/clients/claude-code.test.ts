// The real Claude Code (`claude -p`, from @anthropic-ai/claude-code, offline:
// ANTHROPIC_BASE_URL is the gateway, non-essential traffic off) through the
// gateway, on a backend the request is translated for and on one that
// serves Messages itself. The scripted backend asks for one Read of a file
// and then answers quoting the tool's result: the final answer is printed,
// and the file's line reached the backend, so the tool ran.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runClaudePrint } from '../../support/agent-cli';
import { FINAL_PREFIX } from '../../support/agent-script';
import { MODES, startMessagesStack, type MessagesStack } from '../../support/messages-stack';

const TIMEOUT_MS = 15_000;

describe.each(MODES)('Claude Code (claude -p) through the gateway, %s backend', (mode, model) => {
  let stack: MessagesStack;
  let cwd: string;
  let secret: string;

  beforeAll(async () => {
    cwd = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-claude-gw-')));
    secret = `sluice-${randomBytes(6).toString('hex')}`;
    writeFileSync(join(cwd, 'secret.txt'), `The secret line is ${secret}.\n`);
    // Thinking on: Claude Code asks for adaptive thinking, and a chat backend's reasoning comes back as a thinking block.
    stack = await startMessagesStack({ command: 'cat secret.txt', readPath: join(cwd, 'secret.txt'), thinking: 'Reading the file first.' });
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(cwd, { recursive: true, force: true });
  });

  it.each(['x-api-key', 'bearer'] as const)('reads the file the backend asks for and prints the answer (key as %s)', async (auth) => {
    const from = stack.backend.requests.length;
    const result = await runClaudePrint({ baseUrl: stack.gw.url, apiKey: stack.key, model, prompt: 'Read secret.txt and tell me the secret line.', cwd, auth, timeoutMs: TIMEOUT_MS });
    // stderr holds at most Claude Code's note that it does not know the gateway's model id.
    expect({ code: result.code, timedOut: result.timedOut, stderr: result.stderr.replace(/.*doesn't recognize the model.*\n|\[claude-code:unrecognized_model\].*\n/g, '') }).toEqual({ code: 0, timedOut: false, stderr: '' });
    expect(result.stdout).toContain(FINAL_PREFIX);
    expect(result.stdout).toContain(`The secret line is ${secret}.`);
    const turns = stack.backend.requests.slice(from);
    expect(turns.map((t) => t.url)).toEqual(mode === 'native' ? ['/v1/messages', '/v1/messages'] : ['/v1/chat/completions', '/v1/chat/completions']);
    // The second turn carries the Read tool's output, in the backend's own protocol.
    const result2 = mode === 'native'
      ? turns[1].body.messages.at(-1).content.find((b: any) => b.type === 'tool_result')
      : turns[1].body.messages.find((m: any) => m.role === 'tool');
    expect(JSON.stringify(result2)).toContain(`The secret line is ${secret}.`);
    // Claude Code's adaptive thinking reaches a chat backend as its chat template's switch.
    if (mode === 'translated') expect(turns[0].body.chat_template_kwargs).toEqual({ enable_thinking: true });
    if (mode === 'native') {
      for (const turn of turns) {
        expect(turn.headers['anthropic-beta']).toContain('claude-code-20250219');
        expect(turn.headers['anthropic-version']).toBe('2023-06-01');
        // The gateway's key stays with the gateway.
        expect(turn.headers['x-api-key']).toBeUndefined();
        expect(JSON.stringify(turn.headers)).not.toContain(stack.key);
      }
    }
  });
});
