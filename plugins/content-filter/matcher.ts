// Compiles terms and patterns into one test, once, at config load.
// Terms match whole words or phrases: not inside a longer word, any run of
// whitespace between a phrase's words, any letter case. A term and the text
// are folded the same way (see fold.ts), so look-alike letters, marks over
// letters and invisible characters cannot hide a term. Patterns are the
// operator's regular expressions: they see the text with compatibility forms
// and invisible characters undone, and also folded, so one written in plain
// letters catches look-alikes and one written in any script still matches
// its own letters.
import { collapse, compose, foldReadings, foldText, lightReading } from './fold';

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Letters, digits, marks and underscore continue a word: a term is not found inside one. */
const WORD = '[\\p{L}\\p{N}\\p{M}_]';

export function termSource(term: string): string {
  const words = foldText(term).trim().split(/\s+/).map(escape).join('\\s+');
  return `(?<!${WORD})${words}(?!${WORD})`;
}

/** Tab, newline, carriage return and printable ASCII: the fold leaves such text as it is, but for its whitespace. */
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;
const NEEDS_COLLAPSE = /[\t\n\r]| {2}/;

export function compileMatcher(terms: readonly string[], patterns: readonly string[]): (text: string) => boolean {
  // Terms have no groups and share one regex; each pattern keeps its own, so its
  // group numbers, backreferences and group names mean what the operator wrote.
  const termRegex = terms.length > 0 ? new RegExp(terms.map(termSource).join('|'), 'iu') : undefined;
  const patternRegexes = patterns.map((source) => new RegExp(source, 'iu'));
  const all = termRegex !== undefined ? [termRegex, ...patternRegexes] : patternRegexes;
  if (all.length === 0) return () => false;
  return (text) => {
    if (PLAIN_ASCII.test(text)) {
      const plain = NEEDS_COLLAPSE.test(text) ? collapse(text) : text;
      return all.some((re) => re.test(plain));
    }
    const composed = compose(text);
    const folded = foldReadings(composed);
    if (termRegex !== undefined && folded.some((t) => termRegex.test(t))) return true;
    if (patternRegexes.length === 0) return false;
    const light = lightReading(composed);
    return patternRegexes.some((re) => re.test(light) || folded.some((t) => re.test(t)));
  };
}
