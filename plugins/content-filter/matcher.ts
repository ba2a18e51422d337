// Compiles terms and patterns into one test, once, at config load.
// Terms match whole words or phrases: not inside a longer word, any run of
// whitespace between a phrase's words, any letter case. A term and the text
// are folded the same way (src/text/fold.ts), so look-alike letters, accents,
// marks over letters and invisible or blank characters cannot hide a term; a
// text with JSON escapes (a tool call's arguments) is also read with them
// decoded, so \u0062 cannot hide a "b". Patterns are the
// operator's regular expressions: they see the text with compatibility forms
// and invisible characters undone, and also folded, so one written in plain
// letters catches look-alikes and one written in any script still matches
// its own letters.
import { collapse, compose, decodeJsonEscapes, foldReadings, foldText, lightReading, type Accents } from '../../src';

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Letters, digits, marks and underscore continue a word: a term is not found inside one. */
const WORD = '[\\p{L}\\p{N}\\p{M}_]';

export function termSource(term: string, accents: Accents = 'fold'): string {
  const words = foldText(term, accents).trim().split(/\s+/).map(escape).join('\\s+');
  return `(?<!${WORD})${words}(?!${WORD})`;
}

/** Tab, newline, carriage return and printable ASCII: the fold leaves such text as it is, but for its whitespace. */
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;
const NEEDS_COLLAPSE = /[\t\n\r]| {2}/;

export function compileMatcher(terms: readonly string[], patterns: readonly string[], accents: Accents = 'fold'): (text: string) => boolean {
  // Terms have no groups and share one regex; each pattern keeps its own, so its
  // group numbers, backreferences and group names mean what the operator wrote.
  const termRegex = terms.length > 0 ? new RegExp(terms.map((t) => termSource(t, accents)).join('|'), 'iu') : undefined;
  const patternRegexes = patterns.map((source) => new RegExp(source, 'iu'));
  const all = termRegex !== undefined ? [termRegex, ...patternRegexes] : patternRegexes;
  if (all.length === 0) return () => false;
  const matches = (text: string): boolean => {
    if (PLAIN_ASCII.test(text)) {
      const plain = NEEDS_COLLAPSE.test(text) ? collapse(text) : text;
      return all.some((re) => re.test(plain));
    }
    const composed = compose(text);
    const folded = foldReadings(composed, accents);
    if (termRegex !== undefined && folded.some((t) => termRegex.test(t))) return true;
    if (patternRegexes.length === 0) return false;
    const light = lightReading(composed);
    return patternRegexes.some((re) => re.test(light) || folded.some((t) => re.test(t)));
  };
  // Escapes decoded as well as kept: a text that only looks escaped (a Windows path) is still read as written.
  return (text) => {
    if (matches(text)) return true;
    if (!text.includes('\\')) return false;
    const decoded = decodeJsonEscapes(text).text;
    return decoded !== text && matches(decoded);
  };
}
