// Incremental server-sent-events parser: fed decoded text chunk by chunk as it
// arrives, it hands over each complete event's data at once. Nothing waits for
// more than the current event's own bytes.

export class SseParser {
  private buffer = '';
  /** The last chunk ended in CR: an LF opening the next chunk belongs to it. */
  private skipLf = false;

  constructor(private readonly onData: (data: string) => void) {}

  push(chunk: string): void {
    if (chunk === '') return;
    if (this.skipLf) {
      this.skipLf = false;
      if (chunk.charCodeAt(0) === 10) chunk = chunk.slice(1);
    }
    let text = this.buffer.length > 0 ? this.buffer + chunk : chunk;
    if (text.includes('\r')) {
      // A trailing CR ends its line now (a CR-only stream's last event must not wait).
      this.skipLf = text.endsWith('\r');
      text = text.replace(/\r\n?/g, '\n');
    }
    this.emitComplete(text);
  }

  private emitComplete(text: string): void {
    let start = 0;
    let end: number;
    while ((end = text.indexOf('\n\n', start)) !== -1) {
      this.dispatch(text, start, end);
      start = end + 2;
    }
    this.buffer = start === 0 ? text : text.slice(start);
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
