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
  private readonly chunks: string[] = [];
  /** Absolute position of chunks[0]'s first character. */
  private first = 0;

  append(text: string): void {
    this.chunks.push(text);
    this.end += text.length;
  }

  /** The text from `sent` to `until`, which is gone from here after. */
  take(until: number): string {
    let out = '';
    let at = this.first;
    for (const chunk of this.chunks) {
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
    let drop = 0;
    while (drop < this.chunks.length && this.first + this.chunks[drop].length <= this.sent) this.first += this.chunks[drop++].length;
    if (drop > 0) this.chunks.splice(0, drop);
  }

  /** Drops everything: what comes next starts where this ended. */
  clear(): void {
    this.chunks.length = 0;
    this.first = this.sent = this.end;
  }
}
