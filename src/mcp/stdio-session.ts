// One client session of a stdio MCP server: one process, the key that
// opened it, its open requests. What the process writes is routed by what it
// is: a response to the POST that carried its request; a progress
// notification to the POST whose request named its token; anything else
// (logging, list changes, the server's own requests: sampling, elicitation,
// roots) to the GET stream when one is open, else to an open POST's stream,
// else held (at most MAX_QUEUED_BYTES, oldest dropped first) for the next GET.
// A request not answered within timeoutMs is answered by the gateway and
// cancelled at the server; the session lives on. With no request for
// idleTimeoutMs, the session ends.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpStdioServerConfig } from '../config/schema';
import { parseJson } from './list-filter';
import type { JsonRpcId } from './messages';
import type { ListFilter, RelayEnd } from './relay';
import { idKey, PostAnswer } from './stdio-answer';
import { StdioChild, type ChildEnd } from './stdio-child';

const MAX_QUEUED_BYTES = 16 * 1024 * 1024;
/** What a process may leave unread on its stdin before the gateway stops writing more: one that reads nothing holds no memory of ours. */
const MAX_UNREAD_BYTES = 16 * 1024 * 1024;
const CLIENT_CLOSED = 499;

/** Why the gateway ended a session, for its log line. */
export type StopReason = 'idle' | 'deleted' | 'closing';

interface Pending {
  id: JsonRpcId;
  answer: PostAnswer;
  timer: NodeJS.Timeout;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const isId = (v: unknown): v is JsonRpcId => typeof v === 'string' || typeof v === 'number';
const writable = (res: ServerResponse): boolean => !res.writableEnded && !res.destroyed;
const sse = (line: string): string => `event: message\ndata: ${line}\n\n`;

/** The progress token a message carries (a request's params._meta, a notification's params), as a key. */
function progressToken(message: Json): string | undefined {
  const params = message.params;
  if (!isObject(params)) return undefined;
  const token = message.method === 'notifications/progress' ? params.progressToken : isObject(params._meta) ? params._meta.progressToken : undefined;
  return isId(token) ? idKey(token) : undefined;
}

export class StdioSession {
  /** Unguessable: it is all a client shows to continue a session (with the key that opened it). */
  readonly id = randomBytes(32).toString('base64url');
  readonly child: StdioChild;
  stopReason?: StopReason;
  private readonly pending = new Map<string, Pending>();
  private readonly answers = new Set<PostAnswer>();
  private stream?: ServerResponse;
  private queued: string[] = [];
  private queuedBytes = 0;
  private idleTimer?: NodeJS.Timeout;

  constructor(readonly owner: string, private readonly config: McpStdioServerConfig, ended: (session: StdioSession, end: ChildEnd) => void) {
    this.child = new StdioChild(config, {
      line: (text) => this.route(text),
      exit: (end) => {
        this.gone();
        ended(this, end);
      },
    });
    if (this.child.pid !== undefined) this.idle();
  }

  /** Sends a POST's messages to the process and answers it; resolves when the answer has ended. */
  async post(req: IncomingMessage, res: ServerResponse, messages: unknown[], batch: boolean, filter: ListFilter | undefined): Promise<RelayEnd> {
    // A process that has stopped reading is answered for as one that stopped answering.
    if (this.child.unread > MAX_UNREAD_BYTES) return { failure: 'timeout' };
    clearTimeout(this.idleTimer);
    const answer = new PostAnswer(res, req.headers.accept, this.id, filter, batch);
    const repeated: Array<[string, JsonRpcId]> = [];
    for (const message of messages.filter(isObject)) {
      if (typeof message.method === 'string' && isId(message.id)) {
        const key = idKey(message.id);
        answer.expect(key, progressToken(message));
        // A second request with the id of one still open would take its answer: it is answered here instead.
        if (this.pending.has(key)) {
          repeated.push([key, message.id]);
          continue;
        }
        this.pending.set(key, { id: message.id, answer, timer: setTimeout(() => this.timeout(key), this.config.timeoutMs) });
      }
      this.child.send(JSON.stringify(message)); // one line: JSON.stringify escapes every line break
      if (message.method === 'notifications/cancelled') this.cancelled(message);
    }
    answer.begin();
    for (const [key, id] of repeated) answer.fail(key, id, 'A request with this id is still open in this session: use a new id.', 'invalid');
    if (answer.open.size === 0) answer.end();
    this.answers.add(answer);
    const left = await Promise.race([answer.done.then(() => false), once(res, 'close').then(() => answer.open.size > 0)]);
    this.answers.delete(answer);
    for (const key of answer.open) {
      // The client left: its answers are dropped when they come (a disconnection is not a cancellation).
      clearTimeout(this.pending.get(key)?.timer);
      this.pending.delete(key);
    }
    this.idle();
    return left ? { status: CLIENT_CLOSED } : { status: res.statusCode, outcome: answer.outcome };
  }

  /** The GET stream: the server's messages that belong to no request, until the client or the session ends it. */
  async listen(res: ServerResponse): Promise<RelayEnd> {
    this.stream?.end(); // a client opening a new one has given up on the old one
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'mcp-session-id': this.id });
    res.flushHeaders();
    this.stream = res;
    for (const line of this.queued.splice(0)) res.write(sse(line));
    this.queuedBytes = 0;
    await once(res, 'close');
    if (this.stream === res) this.stream = undefined;
    return { status: 200 };
  }

  stop(reason: StopReason): Promise<void> {
    this.stopReason ??= reason;
    return this.child.stop();
  }

  private route(text: string): void {
    const message = parseJson(text);
    if (!isObject(message)) return; // not a message: the transport allows nothing else on stdout
    if (message.method === undefined) {
      const key = isId(message.id) ? idKey(message.id) : undefined;
      const waiting = key === undefined ? undefined : this.pending.get(key);
      if (waiting === undefined) return; // late (timed out, or its client left)
      clearTimeout(waiting.timer);
      this.pending.delete(key!);
      return this.backpressure(waiting.answer.answer(key!, text, message), waiting.answer.res);
    }
    const token = message.method === 'notifications/progress' ? progressToken(message) : undefined;
    const open = [...this.answers].filter((a) => a.stream && writable(a.res));
    const target = (token === undefined ? undefined : open.find((a) => a.progressTokens.has(token))) ?? (this.stream === undefined ? open[0] : undefined);
    if (target !== undefined) return this.backpressure(target.push(text), target.res);
    if (this.stream !== undefined) return this.backpressure(this.stream.write(sse(text)), this.stream);
    this.queued.push(text);
    this.queuedBytes += text.length;
    while (this.queuedBytes > MAX_QUEUED_BYTES) this.queuedBytes -= this.queued.shift()!.length;
  }

  /** A client slow to read holds the process's output (its pipe fills, it waits) rather than the gateway's memory. */
  private backpressure(written: boolean, res: ServerResponse): void {
    // A response already closed never drains: nothing to wait for (what was written to it is lost with it).
    if (written || !writable(res)) return;
    this.child.pause();
    const go = (): void => {
      res.off('drain', go).off('close', go);
      this.child.resume();
    };
    res.on('drain', go).on('close', go);
  }

  private timeout(key: string): void {
    const waiting = this.pending.get(key);
    if (waiting === undefined) return;
    this.pending.delete(key);
    this.child.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: waiting.id, reason: 'timed out at the gateway' } }));
    waiting.answer.fail(key, waiting.id, 'The MCP server did not answer in time. Try again later.', 'timeout');
  }

  /**
   * The client gave up on a request of its own (a server that honours it sends
   * no answer, cancellation says): its POST is not held open until timeoutMs for one.
   */
  private cancelled(message: Json): void {
    const requestId = isObject(message.params) ? message.params.requestId : undefined;
    const key = isId(requestId) ? idKey(requestId) : undefined;
    const waiting = key === undefined ? undefined : this.pending.get(key);
    if (waiting === undefined) return;
    clearTimeout(waiting.timer);
    this.pending.delete(key!);
    waiting.answer.fail(key!, waiting.id, 'Cancelled by the client.', 'client_closed');
  }

  /** No request open: the session ends after idleTimeoutMs unless one comes. */
  private idle(): void {
    clearTimeout(this.idleTimer);
    if (this.pending.size > 0 || this.answers.size > 0) return;
    this.idleTimer = setTimeout(() => void this.stop('idle'), this.config.idleTimeoutMs);
    this.idleTimer.unref();
  }

  /** The process ended: every open request is answered with an error, the GET stream ends. */
  private gone(): void {
    clearTimeout(this.idleTimer);
    for (const [key, waiting] of this.pending) {
      clearTimeout(waiting.timer);
      waiting.answer.fail(key, waiting.id, 'The MCP server process ended. Start a new session.', 'server_error');
    }
    this.pending.clear();
    this.stream?.end();
    this.queued = [];
  }
}
