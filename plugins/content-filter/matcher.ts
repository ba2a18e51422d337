// Compiles terms and patterns into one test, once, at config load.
// Terms match whole words or phrases: not inside a longer word, any run of
// whitespace between a phrase's words, any letter case.

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function termSource(term: string): string {
  const words = term.trim().split(/\s+/).map(escape).join('\\s+');
  return `(?<![\\p{L}\\p{N}_])${words}(?![\\p{L}\\p{N}_])`;
}

export function compileMatcher(terms: readonly string[], patterns: readonly string[]): (text: string) => boolean {
  const sources = [...terms.map(termSource), ...patterns.map((p) => `(?:${p})`)];
  if (sources.length === 0) return () => false;
  const re = new RegExp(sources.join('|'), 'iu');
  return (text) => re.test(text);
}
