// Runs the real agent CLIs from node_modules, non-interactively and offline:
// `codex exec` with a custom model provider (wire_api = "responses") and
// `claude -p` with ANTHROPIC_BASE_URL, each with its own HOME in a temp dir
// (never the machine user's) and an environment built from scratch, so no
// key, proxy or config of the machine leaks in. Nothing but `baseUrl` is
// reached: update checks, telemetry, plugin sync and error reports are off.
// A run is bounded by `timeoutMs`: then its whole process group is killed.
// Usage:
//   const r = await runCodexExec({ baseUrl: `${gw.url}/v1`, apiKey, prompt: 'Run it', cwd });
//   const r = await runClaudePrint({ baseUrl: gw.url, apiKey, prompt: 'Read secret.txt', cwd });
//   runClaudePrint({ …, mcpConfig: { mcpServers: { … } }, allowedTools: ['mcp__tools__add'] });
//   runCodexExec({ …, config: '[mcp_servers.tools]\nurl = "…"', env: { TOKEN_VAR: key } });
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface AgentRunOptions {
  /** Codex: the provider base_url (…/v1). Claude Code: ANTHROPIC_BASE_URL (no /v1). */
  baseUrl: string;
  apiKey: string;
  prompt: string;
  /** The working directory the agent acts in. */
  cwd: string;
  /** Unset: the CLI's own default model. */
  model?: string;
  timeoutMs?: number;
  /** More variables for the CLI's environment (a token an MCP server's config names). */
  env?: Record<string, string>;
}

export interface CodexRunOptions extends AgentRunOptions {
  /** TOML appended to config.toml (tables such as [mcp_servers.<name>]). */
  config?: string;
  /** false: Codex's own sandbox, as for a task that runs no shell command; default: full access. */
  fullAccess?: boolean;
}

export interface ClaudeRunOptions extends AgentRunOptions {
  /** x-api-key: ANTHROPIC_API_KEY (the default). bearer: ANTHROPIC_AUTH_TOKEN, sent as Authorization: Bearer. */
  auth?: 'x-api-key' | 'bearer';
  /** Passed as --mcp-config (JSON), with --strict-mcp-config so no other server is read. */
  mcpConfig?: unknown;
  /** --allowedTools: the tools run without asking; default Read. */
  allowedTools?: string[];
}

export interface AgentRunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
  /** The temp HOME the run had (removed when it ended), for scrubbing captured requests. */
  home: string;
  /** The launcher's pid, which is also its process group's id. */
  pid: number;
}

/** The environment variable the Codex provider reads its key from. */
export const CODEX_KEY_ENV = 'SLUICE_API_KEY';

// The packages' own launchers: they find the platform binary (an optional
// dependency), and Claude Code's works even when install scripts did not run.
const CODEX_LAUNCHER = join(dirname(require.resolve('@openai/codex/package.json')), 'bin', 'codex.js');
const CLAUDE_LAUNCHER = join(dirname(require.resolve('@anthropic-ai/claude-code/package.json')), 'cli-wrapper.cjs');

/** What every run gets from the machine: enough to find a shell and git, nothing else. */
const baseEnv = (home: string): NodeJS.ProcessEnv => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' });

const toml = (value: string): string => JSON.stringify(value);

export function codexConfig(baseUrl: string, model?: string, fullAccess = true): string {
  return [
    ...(model === undefined ? [] : [`model = ${toml(model)}`]),
    'model_provider = "sluice"',
    // Run the shell command without asking; the container has no sandbox of its own to offer.
    'approval_policy = "never"',
    ...(fullAccess ? ['sandbox_mode = "danger-full-access"'] : []),
    'check_for_update_on_startup = false',
    '',
    '[model_providers.sluice]',
    'name = "Sluice"',
    `base_url = ${toml(baseUrl)}`,
    'wire_api = "responses"',
    `env_key = "${CODEX_KEY_ENV}"`,
    // A failure shows at once instead of after backed-off retries.
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[analytics]',
    'enabled = false',
    '',
    // The plugin marketplace sync runs `git ls-remote` against a public host at start-up.
    '[features]',
    'plugins = false',
    '',
  ].join('\n');
}

export function runCodexExec(opts: CodexRunOptions): Promise<AgentRunResult> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-codex-')));
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome);
  writeFileSync(join(codexHome, 'config.toml'), `${codexConfig(opts.baseUrl, opts.model, opts.fullAccess)}${opts.config ?? ''}`);
  const env = { ...baseEnv(home), ...opts.env, CODEX_HOME: codexHome, [CODEX_KEY_ENV]: opts.apiKey };
  const args = [CODEX_LAUNCHER, 'exec', '--skip-git-repo-check', '--color', 'never', '-C', opts.cwd, opts.prompt];
  return runBounded(args, env, opts, home);
}

export function runClaudePrint(opts: ClaudeRunOptions): Promise<AgentRunResult> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-claude-')));
  const env = {
    ...baseEnv(home),
    ...opts.env,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    ANTHROPIC_BASE_URL: opts.baseUrl,
    [opts.auth === 'bearer' ? 'ANTHROPIC_AUTH_TOKEN' : 'ANTHROPIC_API_KEY']: opts.apiKey,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  const args = [CLAUDE_LAUNCHER, '-p', opts.prompt, '--output-format', 'text', '--allowedTools', ...(opts.allowedTools ?? ['Read']),
    ...(opts.mcpConfig === undefined ? [] : ['--mcp-config', JSON.stringify(opts.mcpConfig), '--strict-mcp-config']),
    ...(opts.model === undefined ? [] : ['--model', opts.model])];
  return runBounded(args, env, opts, home);
}

function runBounded(args: string[], env: NodeJS.ProcessEnv, opts: AgentRunOptions, home: string): Promise<AgentRunResult> {
  const started = Date.now();
  // Its own process group, so a timeout ends the launcher, the binary and every command it ran.
  const child = spawn(process.execPath, args, { cwd: opts.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const killGroup = () => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ } };
  let stdout = '';
  let stderr = '';
  let timedOut = false;
  child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
  child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
  const timer = setTimeout(() => { timedOut = true; killGroup(); }, opts.timeoutMs ?? 30_000);
  return new Promise((resolve) => {
    // 'exit' first: anything the CLI left behind still holds the pipes, so it goes before 'close' can come.
    child.once('exit', killGroup);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
      resolve({ code, signal, stdout, stderr, timedOut, ms: Date.now() - started, home, pid: child.pid! });
    });
    child.once('error', (err) => { stderr += String(err); });
  });
}
