// The fold of fold.ts for text that streams: the same readings, made one
// cluster (a character and the marks on it) at a time, with each folded
// character's source in the original text, so a match found on the folded
// text is cut or masked in the text as written. Plain ASCII is its own
// reading (but for whitespace runs, which become one space).
//
//   const { folded } = foldMapped('ſecret\u200Bplan');   // folded[0].text 'secretplan', folded[1].text 'secret plan'
//   sourceOf(folded[0], 0, 6)                              // [0, 6]: where "secret" is in the original
import { compose, foldLetters, INVISIBLE, type Accents } from './fold';

/** A reading of the text, and per character of it the [start, end) of its source; no maps: the reading is the text itself. */
export interface MappedReading {
  text: string;
  starts?: number[];
  ends?: number[];
}

export interface MappedFold {
  /** The folded readings (fold.ts's foldReadings): one, or two when invisible characters may stand for spaces. */
  folded: MappedReading[];
  /** The letters as written, invisible characters removed (fold.ts's lightReading); undefined unless asked for. */
  light?: MappedReading;
}

const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;
const NEEDS_COLLAPSE = /[\t\n\r]| {2}/;
// An invisible character alone (a variation selector is a mark, but a reading removes it or reads it as a
// space), marks with nothing visible before them, or a character and the marks on it.
const VISIBLE_MARK = `(?:(?!${INVISIBLE})\\p{M})`;
const CLUSTER = new RegExp(`${INVISIBLE}|${VISIBLE_MARK}+|[^]${VISIBLE_MARK}*`, 'gu');
/** Letters whose marks only decorate them (fold.ts): marks after one, past invisible characters, go. */
const DECORATED = /^[\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}0-9]/u;
const MARKS_ONLY = /^\p{M}/u;
const SPACE = /\s/u;

/** One reading as it is built, whitespace runs collapsing to one space. */
class Builder {
  private chars: string[] = [];
  readonly starts: number[] = [];
  readonly ends: number[] = [];
  private space = false;

  add(piece: string, start: number, end: number): void {
    for (const c of piece) {
      if (SPACE.test(c)) {
        if (this.space) { this.ends[this.ends.length - 1] = end; continue; }
        this.space = true;
        this.push(' ', start, end);
      } else {
        this.space = false;
        for (let i = 0; i < c.length; i++) this.push(c[i], start, end);
      }
    }
  }

  private push(c: string, start: number, end: number): void {
    this.chars.push(c);
    this.starts.push(start);
    this.ends.push(end);
  }

  reading(): MappedReading {
    return { text: this.chars.join(''), starts: this.starts, ends: this.ends };
  }
}

/** A cluster's folded and light forms; invisible: whether it is one of the characters a reading removes or reads as a space. */
interface Piece { folded: string; light: string; invisible: boolean }

/** Marks after a decorated letter and invisible characters: removed, as fold.ts removes them. */
const GONE: Piece = { folded: '', light: '', invisible: false };

const CACHE_MAX = 4096;
const caches: Record<Accents, Map<string, Piece>> = { fold: new Map(), exact: new Map() };

function pieceOf(cluster: string, accents: Accents): Piece {
  const cache = caches[accents];
  let piece = cache.get(cluster);
  if (piece === undefined) {
    const composed = compose(cluster);
    piece = { light: composed.text, folded: foldLetters(composed.text, accents), invisible: composed.invisible };
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(cluster, piece);
  }
  return piece;
}

export function foldMapped(text: string, withLight = false, accents: Accents = 'fold'): MappedFold {
  if (PLAIN_ASCII.test(text)) {
    const reading = NEEDS_COLLAPSE.test(text) ? collapsed(text) : { text };
    return { folded: [reading], light: withLight ? reading : undefined };
  }
  const removed = new Builder();
  const light = withLight ? new Builder() : undefined;
  let spaced: Builder | undefined;
  const pieces: Array<[Piece, number, number]> = [];
  let decorated = false;
  for (const m of text.matchAll(CLUSTER)) {
    const start = m.index;
    const end = start + m[0].length;
    // A mark after a decorated letter goes, even one that is also invisible (a variation selector).
    const marksOnly = MARKS_ONLY.test(m[0]);
    const piece = marksOnly && decorated ? GONE : pieceOf(m[0], accents);
    if (!piece.invisible && !marksOnly) decorated = DECORATED.test(m[0]);
    pieces.push([piece, start, end]);
    if (piece.invisible) spaced ??= new Builder();
    if (!piece.invisible) { removed.add(piece.folded, start, end); light?.add(piece.light, start, end); }
  }
  if (spaced !== undefined) for (const [piece, start, end] of pieces) spaced.add(piece.invisible ? ' ' : piece.folded, start, end);
  return { folded: spaced === undefined ? [removed.reading()] : [removed.reading(), spaced.reading()], light: light?.reading() };
}

function collapsed(text: string): MappedReading {
  const b = new Builder();
  for (let i = 0; i < text.length; i++) b.add(text[i], i, i + 1);
  return b.reading();
}

/** Where folded characters [from, to) came from in the original: [start, end). */
export function sourceOf(r: MappedReading, from: number, to: number): [number, number] {
  if (r.starts === undefined) return [from, to];
  if (from >= r.text.length) return [r.ends!.at(-1) ?? 0, r.ends!.at(-1) ?? 0];
  return [r.starts[from], to > from ? r.ends![to - 1] : r.starts[from]];
}

/** The original position folded position `i` starts at (the text's length past the end). */
export function originalAt(r: MappedReading, i: number, length: number): number {
  if (r.starts === undefined) return i;
  return i < r.starts.length ? r.starts[i] : length;
}

/** The first folded position whose source starts at or after original position `from`. */
export function foldedAt(r: MappedReading, from: number): number {
  if (r.starts === undefined) return from;
  let lo = 0;
  let hi = r.starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (r.starts[mid] < from) lo = mid + 1; else hi = mid;
  }
  return lo;
}
