// Letters that look like other letters, folded to the letter they look like:
// the confusables of Unicode's UTS #39 (confusables.txt, as the unhomoglyph
// package ships it), turned at load into a table that folds case-insensitively
// and leaves ASCII alone. The skeleton of UTS #39 maps m to "rn" and I to l;
// here ASCII is never changed, so plain text costs one comparison a character
// and "rn" stays "rn". Applied to decomposed (NFD) text, as UTS #39 does.
import { readFileSync } from 'node:fs';

const ASCII = /^[\x00-\x7f]*$/;

const single = (s: string): boolean => s.length > 0 && String.fromCodePoint(s.codePointAt(0)!) === s;

/** What a character folds to before case is settled: an ASCII one to itself (dotless ı is a case of I). */
const prototypeOf = (c: string, confusables: Record<string, string>): string | undefined =>
  ASCII.test(c) ? c.toLowerCase() : confusables[c] === undefined ? undefined : confusables[c].normalize('NFD').toLowerCase();

/**
 * Each non-ASCII character that folds to something else, and what. A letter's
 * upper and lower case fold alike, so matching stays case-insensitive: to the
 * prototype of its lower case if that is ASCII, else to its upper case's if
 * that is (Cyrillic "В" looks like B, "в" like nothing Latin), else to its
 * lower case's.
 */
export function confusableTable(confusables: Record<string, string>): Map<string, string> {
  const table = new Map<string, string>();
  const chars = new Set<string>();
  for (const c of Object.keys(confusables)) {
    if (!single(c)) continue;
    chars.add(c);
    for (const v of [c.toLowerCase(), c.toUpperCase()]) if (single(v)) chars.add(v);
  }
  // Every other case of those letters too (Greek final ς is a case of Σ, as σ is).
  for (let code = 0x80; code < 0x10000; code++) {
    const c = String.fromCharCode(code);
    if (chars.has(c.toUpperCase())) chars.add(c);
  }
  for (const c of chars) {
    if (ASCII.test(c) || c.normalize('NFKD') !== c) continue; // text is in compatibility-decomposed form when the table applies
    const upper = single(c.toUpperCase()) ? c.toUpperCase() : c;
    const lower = single(upper.toLowerCase()) ? upper.toLowerCase() : c;
    const ofLower = prototypeOf(lower, confusables);
    const ofUpper = prototypeOf(upper, confusables);
    let folded = ofLower !== undefined && ASCII.test(ofLower) ? ofLower : ofUpper !== undefined && ASCII.test(ofUpper) ? ofUpper : ofLower ?? ofUpper;
    if (folded === 'rn') folded = 'm'; // one letter that looks like "rn" looks like m
    if (folded !== undefined && folded !== c) table.set(c, folded);
  }
  return table;
}

/** The table as the hot loop reads it: a slot per BMP code unit (0: none) into the replacements, and a map for the rest. */
interface Lookup { bmp: Uint16Array; replacements: string[]; astral: Map<number, string> }

function lookupOf(table: Map<string, string>): Lookup {
  const lookup: Lookup = { bmp: new Uint16Array(0x10000), replacements: [''], astral: new Map() };
  for (const [c, folded] of table) {
    const code = c.codePointAt(0)!;
    if (code > 0xffff) lookup.astral.set(code, folded);
    else lookup.bmp[code] = lookup.replacements.push(folded) - 1;
  }
  return lookup;
}

const LOOKUP = lookupOf(confusableTable(JSON.parse(readFileSync(require.resolve('unhomoglyph/data.json'), 'utf8')) as Record<string, string>));
const UTF16 = new TextDecoder('utf-16le');

/** `text` (NFD) with each confusable character folded; the same string when none is. */
export function foldConfusables(text: string): string {
  const { bmp, replacements, astral } = LOOKUP;
  let out: Uint16Array | undefined;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const high = code >= 0xd800 && code <= 0xdbff;
    const folded = code < 0x80 ? undefined : high ? astral.get(text.codePointAt(i)!) : bmp[code] !== 0 ? replacements[bmp[code]] : undefined;
    if (folded === undefined) {
      if (out === undefined) continue;
      if (n === out.length) out = grow(out, 1);
      out[n++] = code;
      continue;
    }
    if (out === undefined) {
      // The first fold: the text before it is copied once, then each code unit as it comes.
      out = new Uint16Array(text.length + 16);
      for (n = 0; n < i; n++) out[n] = text.charCodeAt(n);
    }
    if (high) i++; // the pair's low half is folded with it
    if (n + folded.length > out.length) out = grow(out, folded.length);
    for (let j = 0; j < folded.length; j++) out[n++] = folded.charCodeAt(j);
  }
  return out === undefined ? text : UTF16.decode(out.subarray(0, n));
}

function grow(buffer: Uint16Array, need: number): Uint16Array {
  const bigger = new Uint16Array(Math.max(buffer.length * 2, buffer.length + need));
  bigger.set(buffer);
  return bigger;
}
