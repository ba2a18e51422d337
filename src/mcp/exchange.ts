// One MCP request as the gateway sees it, from its arrival until its
// response closes: who sent it, what it held, how it ended and how many
// bytes went each way, for its access line, its count and its tool calls'
// records. Written while the request is served, read once it has closed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Principal } from '../auth/keys';
import type { McpFailure } from './errors';
import { methodLabel, type McpPost } from './messages';
import type { McpOutcome } from './metrics';
import type { ToolCall } from './tool-calls';

/** The server label of a request at the federated /mcp that no one server answered (a server is never named so). */
export const FEDERATED = '*';

export class McpExchange {
  readonly started = performance.now();
  principal?: Principal;
  post?: McpPost;
  /** The tool of a tools/call, when the key may call it (a name it may not call is the client's text: not logged). */
  tool?: string;
  outcome: McpOutcome = 'ok';
  /** Settled once the serving has ended, however it ended. */
  served: Promise<void> = Promise.resolve();
  /** The POST's tools/call requests: each leaves a usage record, a count, a span and an audit line. */
  calls: ToolCall[] = [];
  bytesIn = 0;
  bytesOut = 0;
  /**
   * Aborted once the response has closed: the one listener the exchange puts
   * on it (a tool hook that waits stops waiting for a client that left, and
   * the exchange is logged). A relayed answer's pipe adds its own, so each
   * more would pass the emitter's bound of ten.
   */
  readonly closed: AbortSignal;

  constructor(readonly id: string, public server: string | undefined, private readonly httpMethod: string | undefined, readonly headers: IncomingMessage['headers'], res: ServerResponse) {
    this.closed = closedSignal(res);
  }

  /** The metrics label: the message's method; a GET (the server's own stream) or a DELETE (the session's end) says which it is. */
  method(): string {
    if (this.post !== undefined) return methodLabel(this.post);
    return this.httpMethod === 'GET' ? 'stream' : this.httpMethod === 'DELETE' ? 'session_end' : 'other';
  }
}

/** How a failure the gateway answered counts. */
export const OUTCOME: Record<McpFailure, McpOutcome> = {
  not_found: 'not_found', parse: 'invalid', invalid: 'invalid', too_large: 'too_large', unsupported_media_type: 'invalid',
  timeout: 'timeout', unreachable: 'unreachable', server_error: 'server_error',
  no_session: 'invalid', unknown_session: 'not_found', busy: 'busy',
};

// One reason for every closed response: abort() without one builds a DOMException each time (measured: 3 % of a tool call's CPU).
const CLOSED = new Error('the response has closed');

/** Aborted once the response has closed. */
function closedSignal(res: ServerResponse): AbortSignal {
  const abort = new AbortController();
  if (res.closed) abort.abort(CLOSED);
  else res.once('close', () => abort.abort(CLOSED));
  return abort.signal;
}

/** The gateway's own JSON-RPC answer (nothing was sent on), counted as `outcome`; a wait for a limit also in Retry-After. */
export function sendAnswer(exchange: McpExchange, res: ServerResponse, answer: unknown, outcome: McpOutcome, retryAfter?: number): void {
  exchange.outcome = outcome;
  const text = JSON.stringify(answer);
  exchange.bytesOut = Buffer.byteLength(text);
  const head: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': exchange.bytesOut };
  if (retryAfter !== undefined) head['retry-after'] = retryAfter;
  res.writeHead(200, head);
  res.end(text);
}
