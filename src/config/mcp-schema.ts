// One entry of mcp.servers: a Streamable HTTP server the gateway relays
// (`url`), or a stdio server it starts itself (`command`), one process per
// client session. Exactly one of the two; a field of the other kind is a
// mistake the config check names with its path. A leaf like schema.ts.
import { z } from 'zod';
import { intLike } from './values';

const backendUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });
// A header name as HTTP defines a token; a value with no line break, so no header can be smuggled.
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/, 'must be an HTTP header name');
const headerValue = z.string().regex(/^[^\r\n\0]*$/, 'must not hold a line break');
// What a process's argv and environment can hold: no NUL (spawn refuses it at the first session, not at load).
const argText = z.string().max(65_536).regex(/^[^\0]*$/, 'must not hold a NUL character');
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be an environment variable name (letters, digits, "_")');

const HTTP_ONLY = ['url', 'headers'] as const;
const STDIO_ONLY = ['command', 'args', 'env', 'cwd', 'maxProcesses', 'idleTimeoutMs'] as const;

const fields = z.strictObject({
  url: backendUrl.optional(),
  /** Sent on every request to the server (its credentials, with ${VAR}); the client never sees them. */
  headers: z.record(headerName, headerValue).optional(),
  /** The program to start, found on the gateway's PATH; `args` are passed as they are, no shell. */
  command: argText.min(1).optional(),
  args: z.array(argText).max(1024).optional(),
  /** The child's whole environment besides PATH: the gateway's own never reaches it. */
  env: z.record(envName, argText).optional(),
  cwd: argText.min(1).optional(),
  /** Processes of this server alive at once: one per session; a new session past it is refused (503). */
  maxProcesses: intLike(1, 10_000).optional(),
  /** A session with no request for this long is ended and its process stopped. */
  idleTimeoutMs: intLike(1_000, 86_400_000).optional(),
  /** HTTP: longest wait for the server's answer to begin. stdio: longest wait for the answer to a request. */
  timeoutMs: intLike(1, 3_600_000).default(60_000),
});

export const mcpServerSchema = fields.superRefine((server, ctx) => {
  const given = (names: readonly string[]) => names.filter((n) => server[n as keyof typeof server] !== undefined);
  if (server.url === undefined && server.command === undefined) {
    ctx.addIssue({ code: 'custom', path: [], message: 'needs "url" (a Streamable HTTP server) or "command" (a stdio server the gateway starts)' });
  } else if (server.url !== undefined && server.command !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['command'], message: 'give "url" or "command", not both: a server is either relayed or started' });
  } else {
    const [kind, others] = server.url !== undefined ? ['url', given(STDIO_ONLY)] : ['command', given(HTTP_ONLY)];
    for (const name of others) ctx.addIssue({ code: 'custom', path: [name], message: `not a field of a server with "${kind}"` });
  }
}).transform((s): McpServerConfig => (s.command === undefined
  ? { kind: 'http', url: s.url!, headers: s.headers ?? {}, timeoutMs: s.timeoutMs }
  : {
    kind: 'stdio', command: s.command, args: s.args ?? [], env: s.env ?? {}, cwd: s.cwd,
    maxProcesses: s.maxProcesses ?? 16, idleTimeoutMs: s.idleTimeoutMs ?? 300_000, timeoutMs: s.timeoutMs,
  }));

export interface McpHttpServerConfig {
  kind: 'http';
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface McpStdioServerConfig {
  kind: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  maxProcesses: number;
  idleTimeoutMs: number;
  timeoutMs: number;
}

export type McpServerConfig = McpHttpServerConfig | McpStdioServerConfig;
