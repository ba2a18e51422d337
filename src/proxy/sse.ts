// Incremental server-sent-events parser: fed decoded text chunk by chunk as it
// arrives, it hands over each complete event's data at once. Nothing waits for
// more than the current event's own bytes, and one event may hold at most
// `maxEventChars`: a backend that never ends an event cannot grow memory.

export class SseParser {
  private buffer = '';
  /** The last chunk ended in CR: an LF opening the next chunk belongs to it. */
  private skipLf = false;

  constructor(
    private readonly onData: (data: string) => void,
    private readonly maxEventChars = Infinity,
    private readonly tooLarge: () => Error = () => new Error('server-sent event too large'),
  ) {}

  push(chunk: string): void {
    if (chunk === '') return;
    if (this.skipLf) {
      this.skipLf = false;
      if (chunk.charCodeAt(0) === 10) chunk = chunk.slice(1);
    }
    if (chunk.includes('\r')) {
      // A trailing CR ends its line now (a CR-only stream's last event must not wait).
      this.skipLf = chunk.endsWith('\r');
      chunk = chunk.replace(/\r\n?/g, '\n');
    }
    // Only the new text (and the one character before it) can complete an event: the
    // buffered part was searched already, so a long event is not scanned over and over.
    const searchFrom = Math.max(0, this.buffer.length - 1);
    this.emitComplete(this.buffer.length > 0 ? this.buffer + chunk : chunk, searchFrom);
  }

  private emitComplete(text: string, searchFrom: number): void {
    let start = 0;
    let end: number;
    while ((end = text.indexOf('\n\n', Math.max(start, searchFrom))) !== -1) {
      this.dispatch(text, start, end);
      start = end + 2;
    }
    this.buffer = start === 0 ? text : text.slice(start);
    if (this.buffer.length > this.maxEventChars) {
      this.buffer = '';
      throw this.tooLarge();
    }
  }

  private dispatch(text: string, start: number, end: number): void {
    // Fast path: one "data:" line, the shape every model server sends.
    const newline = text.indexOf('\n', start);
    if ((newline === -1 || newline >= end) && text.startsWith('data:', start)) {
      this.onData(text.slice(start + (text.charCodeAt(start + 5) === 32 ? 6 : 5), end));
      return;
    }
    let data: string | undefined;
    for (const line of text.slice(start, end).split('\n')) {
      if (!line.startsWith('data:')) continue; // comments, event:, id:, retry:
      const value = line.slice(line.charCodeAt(5) === 32 ? 6 : 5);
      data = data === undefined ? value : `${data}\n${value}`;
    }
    if (data !== undefined) this.onData(data);
  }
}
