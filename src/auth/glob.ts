// Model globs ("chat-*", "gpt-4?") compiled once at config load.

export type Matcher = (value: string) => boolean;

export const isGlob = (pattern: string): boolean => /[*?]/.test(pattern);

export function compileGlob(pattern: string): Matcher {
  if (!isGlob(pattern)) return (value) => value === pattern;
  if (pattern === '*') return () => true;
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  const re = new RegExp(`^${source}$`);
  return (value) => re.test(value);
}

/** One matcher for a list of globs; `undefined` means "no restriction". */
export function compileGlobList(patterns: readonly string[] | undefined): Matcher {
  if (patterns === undefined) return () => true;
  const matchers = patterns.map(compileGlob);
  return (value) => matchers.some((m) => m(value));
}
