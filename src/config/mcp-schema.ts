// The config's MCP section (docs/mcp.md): its servers, each a Streamable HTTP
// server the gateway relays (`url`) or a stdio server it starts itself
// (`command`), one process per client session, exactly one of the two (a
// field of the other kind is a mistake the config check names with its
// path); which servers and tools a key or an org may use and how many calls
// it may make; sessions, access tokens and the result bound. A leaf like schema.ts.
import { z } from 'zod';
import { intLike, sizeLike } from './values';
import { mcpOAuthSchema } from './mcp-oauth-schema';

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

const TOOL_NAME = /^[^/]+\/[^/]+$/;
const TOOL_NAME_RULE = 'must be "<server>/<tool>", each part a name or a glob such as github/* or */read_*';

/** One limit on tool calls: at most `requests` calls per `windowSeconds` (docs/mcp.md). */
export const mcpLimitSchema = z.strictObject({
  requests: intLike(1, Number.MAX_SAFE_INTEGER),
  windowSeconds: intLike(1, 86_400 * 31).default(60),
});

/** Most limits one key or org may set: every tool call is checked against each of them. */
export const MAX_MCP_LIMITS = 32;

/** Tool-call limits by glob of "<server>/<tool>": each call counts against every limit whose glob names it. */
export const mcpLimitsSchema = z.record(z.string().max(200).regex(TOOL_NAME), mcpLimitSchema, {
  // Said here, not by the key's own schema: a record reports a bad key only as "Invalid key in record".
  error: (issue) => (issue.code === 'invalid_key' ? `${TOOL_NAME_RULE} (at most 200 characters)` : undefined),
}).check((ctx) => {
  if (Object.keys(ctx.value).length > MAX_MCP_LIMITS) ctx.issues.push({ code: 'custom', input: ctx.value, message: `at most ${MAX_MCP_LIMITS} limits; a glob such as github/* covers many tools at once` });
});

/**
 * Which MCP servers (globs of their names) and tools (globs of "<server>/<tool>")
 * a key or an org may use, a list left out allowing none; and how many tool
 * calls it may make (docs/mcp.md).
 */
export const mcpAccessSchema = z.strictObject({
  servers: z.array(z.string().min(1).max(200)).optional(),
  tools: z.array(z.string().regex(TOOL_NAME, TOOL_NAME_RULE)).optional(),
  /** Tool-call limits of this key (or, shared by its keys, of this org). */
  limits: mcpLimitsSchema.optional(),
});

// An MCP server's name is a path segment of /mcp/<name>: nothing to escape, nothing to decode.
export const MCP_SERVER_NAME = /^[a-z0-9_-]{1,64}$/;
export const mcpSchema = z.strictObject({
  /** How long a session of the federated /mcp lives without a request. */
  sessionIdleMs: intLike(1000, 86_400_000).default(3_600_000),
  servers: z.record(z.string(), mcpServerSchema).default({}).superRefine((servers, ctx) => {
    // Checked here rather than as the record's key schema, so the problem names the entry and says why.
    for (const name of Object.keys(servers)) {
      if (!MCP_SERVER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'must be 1-64 lowercase letters, digits, "-" or "_" (the path /mcp/<name>)' });
      else if (name.includes('__')) ctx.addIssue({ code: 'custom', path: [name], message: 'must not hold "__": on the federated /mcp it separates a server\'s name from its tools\' (<server>__<tool>)' });
    }
  }),
  /** Access tokens from the organisation's issuer, accepted beside the keys (docs/mcp.md#identity). */
  oauth: mcpOAuthSchema(mcpAccessSchema).optional(),
  /** The most of one message answering a tool call that the gateway holds (to check it); larger is answered with an error. */
  maxResultBytes: sizeLike.pipe(z.number().max(1024 ** 3, 'at most 1gb')).default(16 * 1024 ** 2),
});
