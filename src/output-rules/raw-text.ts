// An answer's text as written, from what has not gone out yet: the deltas
// as they came, taken from the front by absolute position. Held text is
// never joined or copied again while it waits, however long it grows.
//
//   const r = new RawText(); r.append('ab'); r.append('cd');
//   r.take(3) → 'abc'; r.skip(4); r.sent → 4

export class RawText {
  /** Absolute position after the last character appended. */
  end = 0;
  /** Absolute position of the first character not yet taken or skipped. */
  sent = 0;
  private chunks: string[] = [];
  /** Index in chunks of the first chunk not wholly gone; those before it wait to be let go in one step. */
  private head = 0;
  /** Absolute position of chunks[head]'s first character. */
  private first = 0;

  append(text: string): void {
    this.chunks.push(text);
    this.end += text.length;
  }

  /** The text from `sent` to `until`, which is gone from here after. */
  take(until: number): string {
    let out = '';
    let at = this.first;
    for (let i = this.head; i < this.chunks.length; i++) {
      const chunk = this.chunks[i];
      const next = at + chunk.length;
      if (next > this.sent && at < until) out += chunk.slice(Math.max(0, this.sent - at), Math.min(chunk.length, until - at));
      if (next >= until) break;
      at = next;
    }
    this.skip(until);
    return out;
  }

  /** Drops the text up to `until` unsent. */
  skip(until: number): void {
    if (until > this.sent) this.sent = until;
    while (this.head < this.chunks.length && this.first + this.chunks[this.head].length <= this.sent) this.first += this.chunks[this.head++].length;
    if (this.head === this.chunks.length) {
      this.chunks = [];
      this.head = 0;
    } else if (this.head >= 32 && this.head * 2 >= this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }

  /** Drops everything: what comes next starts where this ended. */
  clear(): void {
    this.chunks = [];
    this.head = 0;
    this.first = this.sent = this.end;
  }
}
