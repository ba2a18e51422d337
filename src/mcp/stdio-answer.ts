// The answer to one POST to a stdio server's session: the responses to its
// requests, written as an event stream as each arrives (with any message the
// server sends meanwhile that belongs to it), or gathered into one JSON body
// when the client accepts only JSON. It ends once every request it carried is
// answered: by the server, by the gateway's timeout, or by the gateway for a
// process that ended.
import type { ServerResponse } from 'node:http';
import { filterToolLists, parseJson } from './list-filter';
import type { JsonRpcId } from './messages';
import type { McpOutcome } from './metrics';
import type { ListFilter } from './relay';

const EVENT_STREAM = /\btext\/event-stream\b/i;

/** A JSON-RPC error response, as one line. */
export const errorLine = (id: JsonRpcId, message: string): string => JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message } });

/** A request id as a map key: 1 and "1" are different requests. */
export const idKey = (id: JsonRpcId): string => `${typeof id}:${id}`;

export class PostAnswer {
  /** The keys (idKey) of the requests not answered yet. */
  readonly open = new Set<string>();
  readonly progressTokens = new Set<string>();
  readonly stream: boolean;
  /** Set when the gateway, not the server, answered a request: what the request is counted as. */
  outcome?: McpOutcome;
  readonly done: Promise<void>;
  private readonly gathered: string[] = [];
  private requests = 0;
  private finish!: () => void;

  constructor(readonly res: ServerResponse, accept: string | undefined, sessionId: string, private readonly filter: ListFilter | undefined, private readonly batch: boolean) {
    this.stream = EVENT_STREAM.test(accept ?? '');
    this.done = new Promise((resolve) => { this.finish = resolve; });
    res.setHeader('mcp-session-id', sessionId);
  }

  /** One of its requests, to be answered before it ends; `progressToken`: its progress notifications come here. */
  expect(key: string, progressToken: string | undefined): void {
    this.open.add(key);
    this.requests += 1;
    if (progressToken !== undefined) this.progressTokens.add(progressToken);
  }

  /** Starts the event stream's head at once, so a client knows it is open before its first event. */
  begin(): void {
    if (!this.stream || this.open.size === 0) return;
    this.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    this.res.flushHeaders();
  }

  /** A message of the server's for this POST's stream; false when the client is slow to read (the caller waits for 'drain'). */
  push(line: string): boolean {
    if (!this.stream || this.res.writableEnded) return true;
    return this.res.write(`event: message\ndata: ${line}\n\n`);
  }

  /** The answer to one of its requests; the POST ends with its last. */
  answer(key: string, line: string, message: unknown): boolean {
    if (!this.open.delete(key)) return true;
    const filtered = this.filter === undefined ? undefined : filterToolLists(message ?? parseJson(line), this.filter.ids, this.filter.allowed);
    const text = filtered === undefined ? line : JSON.stringify(filtered);
    let ok = true;
    if (this.stream) ok = this.push(text);
    else this.gathered.push(text);
    if (this.open.size === 0) this.end();
    return ok;
  }

  /** The gateway answers a request itself: `outcome` is how the POST is counted. */
  fail(key: string, id: JsonRpcId, message: string, outcome: McpOutcome): void {
    this.outcome = outcome;
    this.answer(key, errorLine(id, message), undefined);
  }

  /** Ends the answer; for a POST that carried no request, 202 with no body. */
  end(): void {
    const res = this.res;
    if (!res.headersSent) {
      if (this.requests === 0) res.writeHead(202).end();
      else if (this.stream) res.writeHead(200, { 'content-type': 'text/event-stream' }).end();
      else {
        const body = this.batch ? `[${this.gathered.join(',')}]` : this.gathered[0];
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      }
    } else if (!res.writableEnded) {
      res.end();
    }
    this.finish();
  }
}
