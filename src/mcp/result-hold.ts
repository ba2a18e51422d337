// The answer to a POST holding tool calls, relayed with the message that
// answers a call held whole (a client acts on a message only once it is whole,
// so holding it delays nothing it could use): a JSON answer, or each event of
// a stream, at most `limit` bytes. Events pass as soon as their blank line
// comes (progress notifications are not delayed by a result still on its
// way). A message past the limit is answered by the gateway, the protocol's
// error for each request of the POST, and what the server still sends is
// discarded as it arrives: memory never holds more than the limit. When a
// plugin reads results (or tools/list is filtered), each message held is
// parsed and rewritten; otherwise it passes as its own bytes.
import type { Readable } from 'node:stream';
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parseJson } from './list-filter';

export interface CallRelay {
  /** The most of one message (a JSON answer, one event) held, in bytes. */
  readonly limit: number;
  /** Rewrites one message (parsed); undefined: it passes as it came. Absent: nothing is parsed. */
  readonly rewrite?: (message: unknown) => Promise<unknown>;
  /** What answers the POST's requests when a message passes the limit (noting that it did). */
  tooLarge(): unknown;
  /** Set once a message passed the limit. */
  exceeded: boolean;
}

/** A JSON answer, held: its text as the client gets it. */
export async function holdJson(body: Readable, length: string | string[] | undefined, relay: CallRelay): Promise<string> {
  if (Number(length ?? 0) > relay.limit) {
    body.destroy();
    return JSON.stringify(relay.tooLarge());
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > relay.limit) {
      body.destroy();
      return JSON.stringify(relay.tooLarge());
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (relay.rewrite === undefined) return text;
  const json = parseJson(text);
  const out = json === undefined ? undefined : await relay.rewrite(json);
  return out === undefined ? text : JSON.stringify(out);
}

/** The end of an event: a blank line, after LF, CRLF or CR line ends. */
const EVENT_END = /\r\n\r\n|\n\n|\r\r/;
const EVENT_ENDS = /\r\n\r\n|\n\n|\r\r/g;

/** An event with its data rewritten (one data line; its other fields, id included, kept), or as it came. */
async function rewriteEvent(event: string, rewrite: (message: unknown) => Promise<unknown>): Promise<string> {
  const lines = event.split(/\r\n|\n|\r/);
  const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
  if (data.length === 0) return event;
  const json = parseJson(data.join('\n'));
  const out = json === undefined ? undefined : await rewrite(json);
  if (out === undefined) return event;
  return [...lines.filter((l) => !l.startsWith('data:')), `data: ${JSON.stringify(out)}`].join('\n');
}

export class CallEvents extends Transform {
  private readonly decoder = new StringDecoder('utf8');
  /** The event being received, as it came; `tail` its last characters (where a blank line may have begun). */
  private parts: string[] = [];
  private tail = '';
  private held = 0;
  private over = false;

  constructor(private readonly relay: CallRelay) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.over) return done(); // the tail of a message past the limit: discarded
    const text = this.decoder.write(chunk);
    const probe = this.tail + text;
    if (!EVENT_END.test(probe)) {
      // No event ends here: the text is kept as it came, never joined again until one does.
      this.parts.push(text);
      this.tail = probe.slice(-3);
      this.held += chunk.length;
      if (this.held > this.relay.limit) return this.refuse(done);
      return done();
    }
    const all = this.parts.join('') + text;
    this.parts = [];
    void this.events(all).then((out) => {
      if (this.held <= this.relay.limit) return done(null, out === '' ? undefined : out);
      if (out !== '') this.push(out);
      this.refuse(done);
    }, done);
  }

  /** Every whole event of `all`, rewritten; what follows the last one is kept for the next chunk. */
  private async events(all: string): Promise<string> {
    // The ends are found first: a rewrite may wait, and the text is not read again after it.
    const ends = [...all.matchAll(EVENT_ENDS)];
    let out = '';
    let at = 0;
    for (const m of ends) {
      const event = all.slice(at, m.index);
      at = m.index + m[0].length;
      out += (this.relay.rewrite === undefined ? event : await rewriteEvent(event, this.relay.rewrite)) + m[0];
    }
    const rest = all.slice(at);
    this.parts = rest === '' ? [] : [rest];
    this.tail = rest.slice(-3);
    this.held = Buffer.byteLength(rest);
    return out;
  }

  /** A message past the limit: the gateway's answer goes out, and the client's stream ends there. */
  private refuse(done: TransformCallback): void {
    this.over = true;
    this.parts = [];
    this.push(`event: message\ndata: ${JSON.stringify(this.relay.tooLarge())}\n\n`);
    this.push(null);
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.over) return done();
    // An event the stream ended in (no blank line after it) is checked as any other.
    const rest = this.parts.join('') + this.decoder.end();
    if (rest === '' || this.relay.rewrite === undefined) return done(null, rest);
    void rewriteEvent(rest, this.relay.rewrite).then((out) => done(null, out), done);
  }
}
