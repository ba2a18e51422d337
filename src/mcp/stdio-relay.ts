// A stdio MCP server, served at /mcp/<name> as Streamable HTTP: the gateway
// starts one process per session (initialize without Mcp-Session-Id), at
// most maxProcesses at once (a new session past it: 503), keeps each session
// to the key that opened it (another key's request with its id is answered
// as for an id never issued: 404), and stops every process when it closes.
//
//   mcp: { servers: { files: { command: node, args: [files-server.js], env: { ROOT: /srv/files }, maxProcesses: 8 } } }
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { McpStdioServerConfig } from '../config/schema';
import { watchProcesses } from './metrics';
import type { ListFilter, RelayCaller, RelayEnd } from './relay';
import type { ChildEnd } from './stdio-child';
import { StdioSession } from './stdio-session';

const isInitialize = (m: unknown): boolean => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize';

export class McpStdioRelay {
  private readonly sessions = new Map<string, StdioSession>();
  private running = 0;
  private closing = false;
  private readonly unwatch: () => void;

  constructor(private readonly name: string, private readonly config: McpStdioServerConfig, private readonly deps: { logger: Logger; metrics?: Registry }) {
    this.unwatch = watchProcesses(deps.metrics, name, () => this.running);
  }

  /** Answers one request of a session (or the initialize that opens one); never throws. */
  async relay(req: IncomingMessage, res: ServerResponse, _body: Buffer | undefined, filter: ListFilter | undefined, caller: RelayCaller): Promise<RelayEnd> {
    const header = req.headers['mcp-session-id'];
    const id = Array.isArray(header) ? header.join(',') : header;
    if (req.method === 'POST') {
      const messages = Array.isArray(caller.json) ? caller.json : [caller.json];
      const session = id === undefined ? (messages.some(isInitialize) ? this.open(caller.key) : 'no_session') : this.find(id, caller.key);
      if (typeof session === 'string') return { failure: session };
      return session.post(req, res, messages, Array.isArray(caller.json), filter);
    }
    const session = id === undefined ? 'no_session' : this.find(id, caller.key);
    if (typeof session === 'string') return { failure: session };
    if (req.method === 'GET') return session.listen(res);
    // Answered at once: the session is gone now; its process goes within the grace, counted until it has.
    void session.stop('deleted');
    res.writeHead(204).end();
    return { status: 204 };
  }

  /** Stops every process (SIGTERM, then SIGKILL after a grace); resolves once all have exited. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.sessions.values()].map((s) => s.stop('closing')));
    this.unwatch();
  }

  private find(id: string, key: string): StdioSession | 'unknown_session' {
    // A session being stopped (DELETE, idle, the line limit) is gone for its client at once, though its process may take a grace to exit.
    const session = this.sessions.get(id);
    return session !== undefined && session.owner === key && !session.child.ending ? session : 'unknown_session';
  }

  private open(key: string): StdioSession | 'busy' | 'unreachable' {
    // Counted until each process has exited, not until its session ended: the bound is on processes.
    if (this.closing || this.running >= this.config.maxProcesses) return 'busy';
    const session = new StdioSession(key, this.config, (s, end) => this.ended(s, end));
    if (session.child.pid === undefined) {
      this.deps.logger.warn({ server: this.name }, 'mcp server process failed to start');
      return 'unreachable';
    }
    this.running += 1;
    this.sessions.set(session.id, session);
    this.deps.logger.info({ server: this.name, pid: session.child.pid }, 'mcp server process started');
    return session;
  }

  private ended(session: StdioSession, end: ChildEnd): void {
    this.running -= 1;
    this.sessions.delete(session.id);
    const fields = { server: this.name, pid: session.child.pid, code: end.code, signal: end.signal, stderrBytes: end.stderrBytes };
    if (end.cause === 'line_too_long') this.deps.logger.warn(fields, 'mcp server process stopped: a line of its output passed the limit');
    else if (end.cause === 'exited') this.deps.logger.warn(fields, 'mcp server process exited on its own');
    else this.deps.logger.info({ ...fields, reason: session.stopReason }, 'mcp server process stopped');
  }
}
