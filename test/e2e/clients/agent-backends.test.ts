// The real agent CLIs, run offline against the scripted native backends with
// no gateway between: Codex (`codex exec`, Responses API) runs the shell
// command the backend asks for, Claude Code (`claude -p`, Messages API) reads
// the file it asks for, and each prints the final answer that quotes the
// tool's output. The same runs go through the gateway elsewhere; these prove
// the clients, the backends and the runners on their own, and keep the
// captured requests in test/fixtures/ true to the pinned client versions.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgentBackend, type AgentBackend } from '../../support/agent-backend';
import { runClaudePrint, runCodexExec, type AgentRunResult } from '../../support/agent-cli';
import { fixture, requestShape, scrubbed, scrubbedHeaders, type Scrub } from '../../support/agent-fixtures';
import { FINAL_PREFIX, PREAMBLE } from '../../support/agent-script';
import { startJsonServer, type RecordedRequest } from '../../support/json-server';
import { until } from '../../support/wait';

const TIMEOUT_MS = 15_000;

interface Run {
  backend: AgentBackend;
  result: AgentRunResult;
  cwd: string;
  key: string;
  /** The random text the tool's output carries: the marker Codex writes, the line Claude Code reads. */
  token: string;
  scrub: Scrub;
}

async function runAgainstBackend(start: (cwd: string, token: string) => Promise<AgentBackend>, run: (backend: AgentBackend, key: string, cwd: string) => Promise<AgentRunResult>): Promise<Run> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-agent-')));
  const token = `sluice-${randomBytes(6).toString('hex')}`;
  const key = `sk-test-${randomBytes(12).toString('hex')}`;
  const backend = await start(cwd, token);
  const result = await run(backend, key, cwd);
  if (result.code !== 0 || result.timedOut) {
    await backend.close();
    rmSync(cwd, { recursive: true, force: true });
    throw new Error(`the CLI ended with ${result.code ?? result.signal}${result.timedOut ? ' (timed out)' : ''}:\n${result.stderr}`);
  }
  const scrub: Scrub = {
    // Claude Code also names its project folder after the cwd, with each / and . as -.
    replace: [[cwd, '/work/project'], [cwd.replace(/[^A-Za-z0-9]/g, '-'), '-work-project'], [result.home, '/home/user'], [key, '<gateway-key>'],
      [`127.0.0.1:${new URL(backend.url).port}`, '127.0.0.1:<port>'], [token, 'sluice-token'], [release(), '<os-release>']],
  };
  return { backend, result, cwd, key, token, scrub };
}

/**
 * Writes (SLUICE_WRITE_FIXTURES=1) or checks a captured request against its fixtures: same fields, tools,
 * items and headers. The headers file is the first turn's; later turns are checked against it.
 */
function matchesFixtures(live: RecordedRequest, scrub: Scrub, bodyFile: string, headersFile: string, turn: 1 | 2): void {
  const body = fixture(bodyFile, scrubbed(live.body, scrub));
  const head = fixture(headersFile, scrubbedHeaders(live, scrub), turn === 1);
  if (body === undefined || head === undefined) throw new Error(`test/fixtures/${bodyFile} or ${headersFile} is missing: run this test with SLUICE_WRITE_FIXTURES=1`);
  expect(requestShape(live)).toEqual(requestShape({ method: head.method, url: head.path, headers: head.headers, body }));
}

/** The processes of a process group that have not exited (zombies aside), from /proc. */
function livingInGroup(pgid: number): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).filter((pid) => {
    try {
      // Fields after the parenthesised command: state, ppid, pgrp, …
      const [state, , pgrp] = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
      return Number(pgrp) === pgid && state !== 'Z';
    } catch {
      return false;
    }
  }).map(Number);
}

const outputsOf = (request: RecordedRequest): any[] => request.body.input.filter((i: any) => String(i.type).endsWith('_call_output'));

describe('Codex CLI (codex exec) against a native Responses backend', () => {
  let run: Run | undefined;
  afterEach(async () => { await run?.backend.close(); if (run) rmSync(run.cwd, { recursive: true, force: true }); run = undefined; });

  const codex = (model?: string) => runAgainstBackend(
    (_cwd, token) => startAgentBackend({ command: `echo ${token} > marker.txt && cat marker.txt` }),
    (backend, key, cwd) => runCodexExec({ baseUrl: backend.base, apiKey: key, prompt: 'Write the marker file, then tell me what it says.', cwd, model, timeoutMs: TIMEOUT_MS }),
  );

  function expectToolRan({ backend, result, cwd, key, token }: Run, outputType: string): RecordedRequest[] {
    expect(readFileSync(join(cwd, 'marker.txt'), 'utf8')).toBe(`${token}\n`);
    expect(backend.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/responses', 'POST /v1/responses']);
    const turns = backend.to('/v1/responses');
    for (const turn of turns) expect(turn.headers).toMatchObject({ authorization: `Bearer ${key}`, accept: 'text/event-stream', originator: 'codex_exec' });
    expect(turns.map((t) => t.body.stream)).toEqual([true, true]);
    expect(outputsOf(turns[0])).toEqual([]);
    expect(outputsOf(turns[1])).toEqual([expect.objectContaining({ type: outputType, call_id: 'call_1' })]);
    expect(JSON.stringify(outputsOf(turns[1])[0].output)).toContain(token);
    // stdout is the final message alone; the preamble went to stderr with the progress.
    expect(result.stdout).toContain(FINAL_PREFIX);
    expect(result.stdout).toContain(token);
    expect(result.stdout).not.toContain(PREAMBLE);
    return turns;
  }

  it('with its default model, runs the command through code mode\'s exec tool and prints the answer', async () => {
    run = await codex();
    const turns = expectToolRan(run, 'custom_tool_call_output');
    // The default model's tools come as an additional_tools input item, not in `tools`.
    expect(turns[0].body.tools).toBeUndefined();
    expect(turns[0].body.input[0]).toMatchObject({ type: 'additional_tools', role: 'developer' });
    expect(turns[0].body).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
    matchesFixtures(turns[0], run.scrub, 'codex-responses-request.json', 'codex-responses-headers.json', 1);
    matchesFixtures(turns[1], run.scrub, 'codex-responses-request-turn2.json', 'codex-responses-headers.json', 2);
  });

  it('with a model it has no metadata for (a gateway\'s own id), runs the command through the exec_command function tool', async () => {
    run = await codex('qwen-coder');
    const turns = expectToolRan(run, 'function_call_output');
    expect(turns[0].body.model).toBe('qwen-coder');
    expect(turns[0].body.tools).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'function', name: 'exec_command' })]));
    matchesFixtures(turns[0], run.scrub, 'codex-responses-request-named-model.json', 'codex-responses-headers-named-model.json', 1);
    matchesFixtures(turns[1], run.scrub, 'codex-responses-request-named-model-turn2.json', 'codex-responses-headers-named-model.json', 2);
  });
});

describe('Claude Code (claude -p) against a native Messages backend', () => {
  let run: Run | undefined;
  afterEach(async () => { await run?.backend.close(); if (run) rmSync(run.cwd, { recursive: true, force: true }); run = undefined; });

  const claude = (auth: 'x-api-key' | 'bearer') => runAgainstBackend(
    (cwd, token) => {
      writeFileSync(join(cwd, 'secret.txt'), `The secret line is ${token}.\n`);
      return startAgentBackend({ command: 'cat secret.txt', readPath: join(cwd, 'secret.txt') });
    },
    (backend, key, cwd) => runClaudePrint({ baseUrl: backend.url, apiKey: key, prompt: 'Read secret.txt and tell me the secret line.', cwd, auth, timeoutMs: TIMEOUT_MS }),
  );

  function expectToolRan({ backend, result, token }: Run): RecordedRequest[] {
    expect(backend.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/messages?beta=true', 'POST /v1/messages?beta=true']);
    const turns = backend.to('/v1/messages');
    for (const turn of turns) expect(turn.headers).toMatchObject({ 'anthropic-version': '2023-06-01', 'x-app': 'cli' });
    expect(turns.map((t) => t.body.stream)).toEqual([true, true]);
    const results = turns[1].body.messages.at(-1).content.filter((b: any) => b.type === 'tool_result');
    expect(results).toEqual([expect.objectContaining({ tool_use_id: 'toolu_0001' })]);
    expect(JSON.stringify(results[0].content)).toContain(`The secret line is ${token}.`);
    expect(result.stdout).toContain(FINAL_PREFIX);
    expect(result.stdout).toContain(token);
    return turns;
  }

  it('sends ANTHROPIC_API_KEY as x-api-key, reads the file the backend asks for and prints the answer', async () => {
    run = await claude('x-api-key');
    const turns = expectToolRan(run);
    for (const turn of turns) {
      expect(turn.headers['x-api-key']).toBe(run.key);
      expect(turn.headers.authorization).toBeUndefined();
      expect(turn.headers['anthropic-beta']).toContain('claude-code-20250219');
    }
    matchesFixtures(turns[0], run.scrub, 'claude-code-messages-request.json', 'claude-code-messages-headers.json', 1);
    matchesFixtures(turns[1], run.scrub, 'claude-code-messages-request-turn2.json', 'claude-code-messages-headers.json', 2);
  });

  it('sends ANTHROPIC_AUTH_TOKEN as Authorization: Bearer', async () => {
    run = await claude('bearer');
    for (const turn of expectToolRan(run)) {
      expect(turn.headers.authorization).toBe(`Bearer ${run.key}`);
      expect(turn.headers['x-api-key']).toBeUndefined();
    }
  });
});

describe('the CLI runners', () => {
  it('end a run whose backend never answers at the time limit, with its whole process group', async () => {
    const held: string[] = [];
    const silent = await startJsonServer((req) => { held.push(req.url ?? ''); });
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-agent-')));
    try {
      // Long enough for both CLIs to start and ask on a loaded machine (Claude Code once took over 2 s to).
      const common = { apiKey: 'sk-test-held', prompt: 'Say hi.', cwd, timeoutMs: 6_000 };
      const runs = await Promise.all([runCodexExec({ ...common, baseUrl: silent.base }), runClaudePrint({ ...common, baseUrl: silent.url })]);
      for (const result of runs) {
        expect(result).toMatchObject({ timedOut: true, code: null, signal: 'SIGKILL' });
        expect(result.ms).toBeLessThan(9_000);
      }
      // SIGKILL lands a moment after it is sent, and the orphans' zombies wait for init to reap them.
      await until(() => runs.every((r) => livingInGroup(r.pid).length === 0), 'the runs\' process groups to end', 3_000);
      // Each was waiting on the backend, not failing on its own.
      expect(held).toEqual(expect.arrayContaining(['/v1/responses', '/v1/messages?beta=true']));
    } finally {
      await silent.close();
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
