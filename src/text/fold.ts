// Text as a reader sees it, for matching: what looks the same folds to one
// form, a term and the text alike. In order:
//   - compatibility forms become plain ones (NFKC: full-width letters,
//     ligatures, circled and mathematical letters);
//   - combining marks left over Latin, Greek and Cyrillic letters go: those
//     that compose with the letter are part of it as written (é, ñ, й), the
//     rest (strike-through, stacked marks, enclosing circles) decorate;
//   - invisible, format and blank characters go, before whitespace runs
//     become one space; where the text had any, it is also read with each run
//     of them as a space (zero-width joiners or a braille blank in place of
//     spaces);
//   - accents go (accents: fold, the default): a letter's marks are taken off
//     it, so "crédit" and "cre\u0301dit" read as "credit"; with `exact` a
//     letter with its own accent stays that letter;
//   - letters that look like others fold to the letter they look like
//     (confusables.ts).
import { foldConfusables } from './confusables';

/** Whether the fold takes accents off letters (fold) or keeps a letter with its accent a letter of its own (exact). */
export type Accents = 'fold' | 'exact';

// What a reader cannot see, or sees as blank space only: Unicode's Default_Ignorable_Code_Point set
// (DerivedCoreProperties.txt: format characters \p{Cf}, the combining grapheme joiner U+034F, Hangul
// fillers U+115F, U+1160, U+3164, U+FFA0, Khmer inherent vowels U+17B4-U+17B5, Mongolian variation
// selectors U+180B-U+180F, variation selectors U+FE00-U+FE0F and U+E0100-U+E01EF, the unassigned
// U+2065, U+FFF0-U+FFF8 and U+E0000-U+E0FFF), controls but the whitespace ones, and the characters
// that are not whitespace yet draw nothing: the braille blank U+2800 and the musical null notehead
// U+1D159. Not U+FFFC (object replacement), which fonts draw as a box; U+3000 and the other spaces
// are whitespace already.
export const INVISIBLE = '[\\p{Cf}\\x00-\\x08\\x0e-\\x1f\\x7f-\\x84\\x86-\\x9f\\u034f\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u2065\\u2800\\u3164\\ufe00-\\ufe0f\\uffa0\\ufff0-\\ufff8\\u{1d159}\\u{e0000}-\\u{e0fff}]';
const INVISIBLE_RUN = new RegExp(`${INVISIBLE}+`, 'gu');
const WHITESPACE_RUN = /\s{2,}|[^\S ]/gu;
const MARK = '[\\p{Mn}\\p{Me}]';

// Per code unit, in one table: whether it is invisible, a mark, or a letter of the alphabets that write
// accents as marks over it (Latin, Greek, Cyrillic; digits carry decorations too). Unicode property classes
// cost a search per non-ASCII character, so each BMP code unit's answer is kept.
const HAS_INVISIBLE = 1;
const HAS_MARK = 2;
const DECORATED = 4;
const invisibleOne = new RegExp(`^${INVISIBLE}$`, 'u');
const markOne = new RegExp(`^${MARK}$`, 'u');
const decoratedOne = /^[\p{sc=Latin}\p{sc=Greek}\p{sc=Cyrillic}0-9]$/u;
const bitsOf = (c: string): number =>
  (invisibleOne.test(c) ? HAS_INVISIBLE : 0) | (markOne.test(c) ? HAS_MARK : 0) | (decoratedOne.test(c) ? DECORATED : 0);
const BMP_BITS = Uint8Array.from({ length: 0x10000 }, (_, code) => (code >= 0xd800 && code <= 0xdfff ? 0 : bitsOf(String.fromCharCode(code))));

function scan(text: string): number {
  let bits = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xd800 || code > 0xdbff) bits |= BMP_BITS[code];
    else bits |= bitsOf(String.fromCodePoint(text.codePointAt(i++)!)); // astral: tag characters are invisible
  }
  return bits;
}

/**
 * `text` without the marks over Latin, Greek and Cyrillic letters and digits
 * (invisible characters may sit between), in one pass; marks that are letters'
 * own parts in other scripts (Devanagari vowel signs, dakuten) stay.
 */
function withoutMarksOverLetters(text: string): string {
  let out = '';
  let copied = 0;
  let over = false; // whether a mark here sits over such a letter
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const astral = code >= 0xd800 && code <= 0xdbff;
    const bits = astral ? bitsOf(String.fromCodePoint(text.codePointAt(i)!)) : BMP_BITS[code];
    if ((bits & HAS_MARK) !== 0 && over) {
      out += text.slice(copied, i);
      copied = i + (astral ? 2 : 1);
    } else if ((bits & (HAS_MARK | HAS_INVISIBLE)) === 0) over = (bits & DECORATED) !== 0;
    if (astral) i++;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** Whitespace runs become one space (a single space, the common case, is left alone). */
export const collapse = (text: string): string => text.replace(WHITESPACE_RUN, ' ');

/** Compatibility forms undone and decorating marks removed: the text both readings start from. */
export interface Composed { text: string; invisible: boolean }

export function compose(text: string): Composed {
  const nfkc = text.normalize('NFKC');
  const bits = scan(nfkc);
  return { text: bits & HAS_MARK ? withoutMarksOverLetters(nfkc) : nfkc, invisible: (bits & HAS_INVISIBLE) !== 0 };
}

/** Composed text (no invisible characters) with its accents taken off (unless exact) and look-alike letters folded. */
export function foldLetters(text: string, accents: Accents): string {
  const nfd = text.normalize('NFD');
  const bare = accents === 'fold' ? withoutMarksOverLetters(nfd) : nfd;
  return foldConfusables(bare).normalize('NFC');
}

/** The text folded, in every reading: one, or two when invisible characters may stand for spaces. */
export function foldReadings({ text, invisible }: Composed, accents: Accents = 'fold'): string[] {
  const readings = invisible ? [text.replace(INVISIBLE_RUN, ''), text.replace(INVISIBLE_RUN, ' ')] : [text];
  return readings.map((t) => collapse(foldLetters(t, accents)));
}

/** The text with its letters as written (accents kept), invisible characters removed: what a pattern in any script expects. */
export function lightReading({ text, invisible }: Composed): string {
  return collapse(invisible ? text.replace(INVISIBLE_RUN, '') : text);
}

/** `text` as a term is matched: its first reading. */
export const foldText = (text: string, accents: Accents = 'fold'): string => foldReadings(compose(text), accents)[0];
