// Compiles terms and patterns into one test, once, at config load.
// Terms match whole words or phrases: not inside a longer word, any run of
// whitespace between a phrase's words, any letter case. Text is normalised
// before matching, so look-alike forms and invisible characters cannot hide
// a term: Unicode NFKC (full-width and ligature forms fold to plain letters),
// invisible and control characters removed, whitespace runs made one space.

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function termSource(term: string): string {
  const words = normalizeText(term).trim().split(/\s+/).map(escape).join('\\s+');
  return `(?<![\\p{L}\\p{N}_])${words}(?![\\p{L}\\p{N}_])`;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const WHITESPACE_RUN = /\s+/gu;
// Format (zero-width space and joiners, soft hyphen, bidi marks), control, and the fillers and variation selectors Cf leaves out.
const INVISIBLE = /[\p{Cf}\p{Cc}\u034f\u115f\u1160\u3164\uffa0\u180b-\u180d\ufe00-\ufe0f]/gu;

export function normalizeText(text: string): string {
  if (PRINTABLE_ASCII.test(text)) return text.includes('  ') ? text.replace(WHITESPACE_RUN, ' ') : text;
  return text.normalize('NFKC').replace(WHITESPACE_RUN, ' ').replace(INVISIBLE, '');
}

export function compileMatcher(terms: readonly string[], patterns: readonly string[]): (text: string) => boolean {
  // Terms have no groups and share one regex; each pattern keeps its own, so its
  // group numbers, backreferences and group names mean what the operator wrote.
  const regexes = [...(terms.length > 0 ? [terms.map(termSource).join('|')] : []), ...patterns].map((source) => new RegExp(source, 'iu'));
  if (regexes.length === 0) return () => false;
  return (text) => {
    const normal = normalizeText(text);
    return regexes.some((re) => re.test(normal));
  };
}
