// What the output rules read of a window's text: the text as a client reads
// it, with each character's place in the text as written, built as the text
// arrives so that every delta costs what it adds.
//   - JSON escapes are decoded (`\u0062` reads as "b"): tool arguments and
//     JSON-mode content are JSON, and a client that parses them sees the
//     decoded text. An escape split across deltas waits for its end.
//   - A run of filler (whitespace, invisible format characters, combining
//     marks) reads as its first FILLER_RUN characters, plus the first of a
//     kind the run had not yet shown: matching folds such a run to one space
//     or to nothing whatever its length, so a model streaming thousands of
//     zero-width spaces costs the rules a bounded read, not a growing one.
//
// Where each character began is kept as stretches (a character's place is
// its stretch's plus its distance into it), so plain text, where the two
// agree, costs one stretch however long it is.
//
//   const v = new TextView();
//   v.append('a \\u00', 0); v.text  → 'a '        (the escape waits)
//   v.append('62c', 7);     v.text  → 'a bc'      (v.rawAt(2) = 2: "b" began at the backslash)

import { SIMPLE_ESCAPES } from '../text/json-escapes';

/** Filler characters of one run the view keeps before it keeps only new kinds. */
export const FILLER_RUN = 16;

const SPACE = 1;
const INVISIBLE = 2;
const MARK = 4;

const invisibleOne = /^[\p{Cf}\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u034f\u115f\u1160\u2800\u3164\uffa0\u180b-\u180d\ufe00-\ufe0f]$/u;
const classOf = (c: string): number => (/^\s$/u.test(c) ? SPACE : invisibleOne.test(c) ? INVISIBLE : /^[\p{Mn}\p{Me}]$/u.test(c) ? MARK : 0);
// Each BMP code unit's kind, decided once at load (a Unicode class costs a search per character).
const BMP = Uint8Array.from({ length: 0x10000 }, (_, code) => (code >= 0xd800 && code <= 0xdfff ? 0 : classOf(String.fromCharCode(code))));

/** A surrogate pair's kind: tag characters and the supplementary variation selectors are invisible. */
const pairClass = (high: number, low: number): number => (high === 0xdb40 && low >= 0xdc00 && low <= 0xddef ? INVISIBLE : 0);

const PARTIAL_HEX = /^[0-9a-fA-F]{0,4}$/;

export class TextView {
  /** The text as read, from the first character not yet dropped. */
  text = '';
  /** Stretches of characters read one after another in the text as written: where each begins in the text read and in the text as written (both absolute). */
  private stretchAt: number[] = [];
  private stretchRaw: number[] = [];
  /** Characters read since the last clear, and of them dropped from the front. */
  private length = 0;
  private dropped = 0;
  /** Where the next character would begin in the text as written to continue the last stretch. */
  private next = -1;
  /** Where the text as written stops being read: an unfinished escape begins there (absolute). */
  end = 0;
  /** Index in `text` of the last character that is not filler (-1: none). */
  lastSolid = -1;
  /** An escape not yet complete, as written. */
  private escape = '';
  private runLength = 0;
  private runKinds = 0;
  /** A high surrogate waiting for its low half, and where it began. */
  private high = '';
  private highAt = 0;

  /** Reads `raw`, which begins at absolute position `at` of the text as written; whether the text read grew. */
  append(raw: string, at: number): boolean {
    // An escape left unfinished is read again with what follows it.
    if (this.escape !== '') {
      at -= this.escape.length;
      raw = this.escape + raw;
      this.escape = '';
    }
    let added = '';
    // Plain characters are copied a stretch at a time; escapes, surrogates and filler one by one.
    let plain = 0;
    for (let i = 0; i < raw.length; i++) {
      const code = raw.charCodeAt(i);
      if (this.escape === '' && this.high === '' && code !== 0x5c && (code < 0xd800 || code > 0xdfff)) {
        const kind = BMP[code];
        if (kind === 0) {
          this.runLength = this.runKinds = 0;
          this.lastSolid = this.length - this.dropped;
        } else if (this.runLength < FILLER_RUN || (this.runKinds & kind) === 0) {
          this.runLength++;
          this.runKinds |= kind;
        } else {
          if (plain < i) added += raw.slice(plain, i);
          plain = i + 1;
          continue;
        }
        this.mark(at + i);
        continue;
      }
      if (plain < i) added += raw.slice(plain, i);
      plain = i + 1;
      if (this.escape === '' && code !== 0x5c) { added += this.read(raw[i], at + i); continue; }
      this.escape += raw[i];
      const start = at + i + 1 - this.escape.length;
      const decoded = decodeEscape(this.escape);
      if (decoded === undefined) continue;
      if (decoded !== '') { this.escape = ''; added += this.read(decoded, start); continue; }
      // Not an escape: its backslash reads as written, and what followed it is read again.
      const rest = this.escape.slice(1);
      this.escape = '';
      added += this.read('\\', start);
      i -= rest.length;
      plain = i + 1;
    }
    added += raw.slice(plain);
    this.text += added;
    this.end = this.high !== '' ? this.highAt : at + raw.length - this.escape.length;
    return added !== '';
  }

  /** The text as written ends: an unfinished escape or a lone surrogate reads as written. */
  finish(at: number): void {
    const escape = this.escape;
    this.escape = '';
    let added = '';
    for (let i = 0; i < escape.length; i++) added += this.read(escape[i], at - escape.length + i);
    if (this.high !== '') { added += this.keep(this.high, this.highAt, 0); this.high = ''; }
    this.text += added;
    this.end = at;
  }

  /** Where the character at `index` begins in the text as written; past the end, where reading stopped. */
  rawAt(index: number): number {
    const at = index + this.dropped;
    if (at >= this.length) return this.end;
    const k = this.stretchOf(at);
    return this.stretchRaw[k] + at - this.stretchAt[k];
  }

  /** Forgets the first `count` characters. */
  drop(count: number): void {
    if (count <= 0) return;
    this.text = this.text.slice(count);
    this.dropped += count;
    this.lastSolid -= count;
    const k = this.stretchOf(this.dropped);
    if (k > 0) {
      this.stretchAt.splice(0, k);
      this.stretchRaw.splice(0, k);
    }
  }

  /** Forgets everything read (the escape and run state too). */
  clear(at: number): void {
    this.text = '';
    this.stretchAt = [];
    this.stretchRaw = [];
    this.length = this.dropped = 0;
    this.next = -1;
    this.escape = this.high = '';
    this.runLength = this.runKinds = 0;
    this.lastSolid = -1;
    this.end = at;
  }

  /** One decoded code unit, begun at `at`: what it adds to the text. */
  private read(unit: string, at: number): string {
    const code = unit.charCodeAt(0);
    if (this.high !== '') {
      const high = this.high;
      this.high = '';
      if (code >= 0xdc00 && code <= 0xdfff) return this.keep(high + unit, this.highAt, pairClass(high.charCodeAt(0), code));
      return this.keep(high, this.highAt, 0) + this.read(unit, at);
    }
    if (code >= 0xd800 && code <= 0xdbff) {
      this.high = unit;
      this.highAt = at;
      return '';
    }
    return this.keep(unit, at, BMP[code]);
  }

  /** A character of kind `kind` (0: not filler): kept, or left out of a long run of filler. */
  private keep(c: string, at: number, kind: number): string {
    if (kind === 0) {
      this.runLength = this.runKinds = 0;
      this.lastSolid = this.length - this.dropped;
    } else {
      if (this.runLength >= FILLER_RUN && (this.runKinds & kind) !== 0) return '';
      this.runLength++;
      this.runKinds |= kind;
    }
    this.mark(at);
    if (c.length === 2) this.mark(at);
    return c;
  }

  /** One more character read, begun at `at` in the text as written. */
  private mark(at: number): void {
    if (at !== this.next) {
      this.stretchAt.push(this.length);
      this.stretchRaw.push(at);
    }
    this.length++;
    this.next = at + 1;
  }

  /** The stretch that holds the character read at absolute index `at`. */
  private stretchOf(at: number): number {
    let low = 0;
    let high = this.stretchAt.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.stretchAt[mid] <= at) low = mid;
      else high = mid - 1;
    }
    return low;
  }
}

/** A JSON escape's one code unit once `escape` (from its backslash) is complete; undefined while it may still be one; '' when it is none. */
function decodeEscape(escape: string): string | undefined {
  if (escape.length < 2) return undefined;
  if (escape[1] !== 'u') return SIMPLE_ESCAPES[escape[1]] ?? '';
  const hex = escape.slice(2);
  if (!PARTIAL_HEX.test(hex)) return '';
  return hex.length < 4 ? undefined : String.fromCharCode(parseInt(hex, 16));
}
