// A text/event-stream answer whose POST held a tools/list request, event by
// event as it arrives: each event is passed on as soon as its blank line
// comes; the list's answer is rewritten (its data as one line, its other
// fields, id included, kept), every other event passes as its own bytes.
// An event may hold at most `maxEventBytes`: a server that never ends one
// cannot grow memory without bound.
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { filterToolLists, parseJson, type ToolAllowed } from './list-filter';
import type { JsonRpcId } from './messages';

/** The end of an event: a blank line, after LF, CRLF or CR line ends. */
const EVENT_END = /\r\n\r\n|\n\n|\r\r/;

/** The event with its data filtered, or undefined when it passes as it came. */
export function filterEvent(event: string, ids: ReadonlySet<JsonRpcId>, allowed: ToolAllowed): string | undefined {
  const lines = event.split(/\r\n|\n|\r/);
  const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
  if (data.length === 0) return undefined;
  const filtered = filterToolLists(parseJson(data.join('\n')), ids, allowed);
  if (filtered === undefined) return undefined;
  const others = lines.filter((l) => !l.startsWith('data:'));
  return [...others, `data: ${JSON.stringify(filtered)}`].join('\n');
}

export class EventFilter extends Transform {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly ids: ReadonlySet<JsonRpcId>, private readonly allowed: ToolAllowed, private readonly maxEventBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let text = this.pending + this.decoder.write(chunk);
    let out = '';
    for (let end = text.search(EVENT_END); end !== -1; end = text.search(EVENT_END)) {
      const sep = text.startsWith('\r\n\r\n', end) ? 4 : 2;
      const event = text.slice(0, end);
      out += (filterEvent(event, this.ids, this.allowed) ?? event) + text.slice(end, end + sep);
      text = text.slice(end + sep);
    }
    this.pending = text;
    if (Buffer.byteLength(text) > this.maxEventBytes) return done(new Error('server-sent event too large'));
    done(null, out === '' ? undefined : out);
  }

  override _flush(done: TransformCallback): void {
    done(null, this.pending + this.decoder.end());
  }
}
