// Incremental server-sent-events parser: fed decoded text chunk by chunk as it
// arrives, it hands over each complete event's data (and its `event:` name,
// when it has one) at once. Its work is linear in the text received: a chunk
// is searched once, and an unfinished event's chunks are kept as they came,
// joined only when its blank line arrives. One event may hold at most
// `maxEventChars`: a backend that never ends an event cannot grow memory past
// about twice that (the kept chunks, then their join).

export type SseHandler = (data: string, event: string | undefined) => void;

export class SseParser {
  /** The chunks of the unfinished event, as they came, and their total length. */
  private pending: string[] = [];
  private pendingLength = 0;
  /** The pending text ends in a newline: a newline opening the next chunk ends the event. */
  private pendingEndsLine = false;
  /** The last chunk ended in CR: an LF opening the next chunk belongs to it. */
  private skipLf = false;

  constructor(
    private readonly onData: SseHandler,
    private readonly maxEventChars = Infinity,
    private readonly tooLarge: () => Error = () => new Error('server-sent event too large'),
  ) {}

  push(chunk: string): void {
    if (this.skipLf) {
      this.skipLf = false;
      if (chunk.charCodeAt(0) === 10) chunk = chunk.slice(1);
    }
    if (chunk === '') return;
    if (chunk.includes('\r')) {
      // A trailing CR ends its line now (a CR-only stream's last event must not wait).
      this.skipLf = chunk.endsWith('\r');
      chunk = chunk.replace(/\r\n?/g, '\n');
    }
    let start = 0;
    if (this.pendingLength > 0) {
      // The unfinished event ends in this chunk, or the chunk joins it. A newline opening the
      // chunk after one that closed the kept text makes the blank line by itself.
      const endsAtOpen = this.pendingEndsLine && chunk.charCodeAt(0) === 10;
      const end = endsAtOpen ? 0 : chunk.indexOf('\n\n');
      if (end === -1) return this.keep(chunk, 0);
      const text = this.pending.join('') + chunk.slice(0, end);
      this.pending = [];
      this.pendingLength = 0;
      this.dispatch(text, 0, endsAtOpen ? text.length - 1 : text.length);
      start = endsAtOpen ? 1 : end + 2;
    }
    let end: number;
    while ((end = chunk.indexOf('\n\n', start)) !== -1) {
      this.dispatch(chunk, start, end);
      start = end + 2;
    }
    if (start < chunk.length) this.keep(chunk, start);
  }

  /** Keeps the unfinished rest of a chunk, refusing an event past the cap. */
  private keep(chunk: string, start: number): void {
    const rest = start === 0 ? chunk : chunk.slice(start);
    this.pendingLength += rest.length;
    if (this.pendingLength > this.maxEventChars) {
      this.pending = [];
      this.pendingLength = 0;
      this.pendingEndsLine = false;
      throw this.tooLarge();
    }
    this.pending.push(rest);
    this.pendingEndsLine = rest.charCodeAt(rest.length - 1) === 10;
  }

  /** The event in text[start, end): its data lines joined by newlines, and its event name. */
  private dispatch(text: string, start: number, end: number): void {
    // Fast path: one "data:" line, the shape every model server sends.
    const newline = text.indexOf('\n', start);
    if ((newline === -1 || newline >= end) && text.startsWith('data:', start)) {
      this.onData(text.slice(start + (text.charCodeAt(start + 5) === 32 ? 6 : 5), end), undefined);
      return;
    }
    let data: string | undefined;
    let event: string | undefined;
    for (let line = start; line < end;) {
      let lineEnd = text.indexOf('\n', line);
      if (lineEnd === -1 || lineEnd > end) lineEnd = end;
      // Comments and id: and retry: lines are skipped.
      if (text.startsWith('data:', line)) {
        const value = text.slice(line + (text.charCodeAt(line + 5) === 32 ? 6 : 5), lineEnd);
        data = data === undefined ? value : `${data}\n${value}`;
      } else if (text.startsWith('event:', line)) {
        event = text.slice(line + (text.charCodeAt(line + 6) === 32 ? 7 : 6), lineEnd);
      }
      line = lineEnd + 1;
    }
    if (data !== undefined) this.onData(data, event);
  }
}
