// Compiles terms and patterns into one test, once, at config load.
// Terms match whole words or phrases: not inside a longer word, any run of
// whitespace between a phrase's words, any letter case.

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function termSource(term: string): string {
  const words = term.trim().split(/\s+/).map(escape).join('\\s+');
  return `(?<![\\p{L}\\p{N}_])${words}(?![\\p{L}\\p{N}_])`;
}

export function compileMatcher(terms: readonly string[], patterns: readonly string[]): (text: string) => boolean {
  // Terms have no groups and share one regex; each pattern keeps its own, so its
  // group numbers, backreferences and group names mean what the operator wrote.
  const regexes = [...(terms.length > 0 ? [terms.map(termSource).join('|')] : []), ...patterns].map((source) => new RegExp(source, 'iu'));
  if (regexes.length === 0) return () => false;
  return (text) => regexes.some((re) => re.test(text));
}
