// One process of a stdio MCP server. Its environment is PATH and the
// configured `env`, nothing else: the gateway's own (its keys, its servers'
// credentials) never reaches a program it starts. It leads its own process
// group, so a stop reaches whatever it started in turn. Its stdout is
// newline-delimited JSON-RPC (basic/transports, stdio), read line by line,
// a line at most MAX_LINE_BYTES; its stderr is the server's log, read and
// dropped (counted), so a chatty server never blocks on a full pipe and its
// text never reaches a client or the gateway's log.
import { spawn, type ChildProcess } from 'node:child_process';
import type { McpStdioServerConfig } from '../config/schema';

/** The longest line the gateway holds: a server past it is stopped (its session ends), never read on without bound. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
// The specification's shutdown for stdio (basic/lifecycle): close its stdin, wait, SIGTERM, wait, SIGKILL.
/** From closing its stdin to SIGTERM. */
export const TERM_AFTER_MS = 500;
/** From SIGTERM to SIGKILL. */
export const KILL_AFTER_MS = 2000;
const NEWLINE = 0x0a;

/** Why a process ended: on its own (or crashed), stopped by the gateway, or stopped for a line past the bound. */
export type ChildEnd = { cause: 'exited' | 'stopped' | 'line_too_long'; code: number | null; signal: NodeJS.Signals | null; stderrBytes: number };

export interface ChildHandlers {
  /** One line of stdout, without its line end. */
  line(text: string): void;
  /** Once, when the process has exited. */
  exit(end: ChildEnd): void;
}

export class StdioChild {
  readonly pid: number | undefined;
  /** Resolves once the process has exited (at once when it never started). */
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private stderrBytes = 0;
  private stopping?: 'stopped' | 'line_too_long';
  private stopTimer?: NodeJS.Timeout;

  constructor(config: McpStdioServerConfig, private readonly handlers: ChildHandlers) {
    this.child = spawn(config.command, config.args, {
      cwd: config.cwd,
      env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', ...config.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      windowsHide: true,
    });
    this.pid = this.child.pid;
    // A process that could not start reports it here (and no exit follows); the caller saw pid undefined.
    this.child.on('error', () => {});
    this.child.stdin!.on('error', () => {}); // EPIPE after the process ended: its exit says so
    this.child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    this.child.stderr!.on('data', (chunk: Buffer) => { this.stderrBytes += chunk.length; });
    this.exited = this.pid === undefined ? Promise.resolve() : new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        clearTimeout(this.stopTimer);
        this.signalGroup('SIGKILL'); // whatever it started and left behind
        this.handlers.exit({ cause: this.stopping ?? 'exited', code, signal, stderrBytes: this.stderrBytes });
        resolve();
      });
    });
  }

  /** Writes one message as one line; false when the process can no longer take it. */
  send(message: string): boolean {
    const stdin = this.child.stdin!;
    if (this.stopping !== undefined || stdin.destroyed || !stdin.writable) return false;
    stdin.write(`${message}\n`);
    return true;
  }

  /** Bytes written to stdin that the process has not read yet. */
  get unread(): number {
    return this.child.stdin!.writableLength;
  }

  /** Being stopped, or exited: it takes no more messages. */
  get ending(): boolean {
    return this.stopping !== undefined || this.pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null;
  }

  pause(): void { this.child.stdout!.pause(); }
  resume(): void { this.child.stdout!.resume(); }

  /** Closes its stdin; SIGTERM to its group TERM_AFTER_MS later, SIGKILL KILL_AFTER_MS after that; resolves once it has exited. */
  stop(cause: 'stopped' | 'line_too_long' = 'stopped'): Promise<void> {
    if (this.pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) return this.exited;
    if (this.stopping === undefined) {
      this.stopping = cause;
      this.held = [];
      this.child.stdout!.destroy();
      this.child.stdin!.end();
      this.stopTimer = setTimeout(() => {
        this.signalGroup('SIGTERM');
        this.stopTimer = setTimeout(() => this.signalGroup('SIGKILL'), KILL_AFTER_MS);
      }, TERM_AFTER_MS);
    }
    return this.exited;
  }

  private signalGroup(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid!, signal);
    } catch {
      // the group is gone already
    }
  }

  private read(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1 && this.stopping === undefined; end = chunk.indexOf(NEWLINE, start)) {
      if (this.heldBytes + end - start > MAX_LINE_BYTES) return void this.stop('line_too_long');
      const part = chunk.subarray(start, end);
      const bytes = this.held.length === 0 ? part : Buffer.concat([...this.held, part]);
      this.held = [];
      this.heldBytes = 0;
      start = end + 1;
      const text = bytes.toString('utf8').replace(/\r$/, '');
      if (text.trim() !== '') this.handlers.line(text);
    }
    if (this.stopping !== undefined || start === chunk.length) return;
    this.held.push(chunk.subarray(start));
    this.heldBytes += chunk.length - start;
    if (this.heldBytes > MAX_LINE_BYTES) this.stop('line_too_long');
  }
}
