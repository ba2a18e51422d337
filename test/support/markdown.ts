// Reading Markdown as the docs tests check it: headings and the anchors
// GitHub makes of them, relative links, and tables. Code (fenced blocks and
// inline spans) is neither a heading nor a link.
//
//   const problems = linkProblems(['README.md', 'docs/errors.md'], readRepoFile);
//   const rows = tableUnder(readFileSync('docs/errors.md', 'utf8'), 'Reasons');
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { ROOT } from './process';

const FENCE = /^\s*(```|~~~)/;

/** The text with every line of a fenced code block emptied (line numbers kept). */
export function withoutFences(md: string): string {
  let inFence = false;
  return md.split('\n').map((line) => {
    if (FENCE.test(line)) {
      inFence = !inFence;
      return '';
    }
    return inFence ? '' : line;
  }).join('\n');
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped (not - or _), each space a dash. */
export function slug(heading: string): string {
  const text = heading.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '').trim().toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-');
}

/** Every anchor a page's headings make, a repeated one numbered as GitHub does (-1, -2, …). */
export function anchorsOf(md: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(md).split('\n')) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

export interface Link { target: string; line: number }

// [text](target) or ![alt](target), the text possibly over several lines, an optional "title".
const LINK = /!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g;

/** The links of a page, outside code. */
export function linksOf(md: string): Link[] {
  const text = withoutFences(md).replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
  const links: Link[] = [];
  for (const m of text.matchAll(LINK)) {
    links.push({ target: m[1], line: text.slice(0, m.index).split('\n').length });
  }
  return links;
}

const EXTERNAL = /^([a-z][a-z0-9+.-]*:|\/\/)/i;

/**
 * A file's text by its path from the repo root: a string for a file, null
 * for a directory, undefined when nothing is there.
 */
export type ReadFile = (path: string) => string | null | undefined;

export const readRepoFile: ReadFile = (path) => {
  try {
    return statSync(join(ROOT, path)).isDirectory() ? null : readFileSync(join(ROOT, path), 'utf8');
  } catch {
    return undefined;
  }
};

/** Every relative link of these pages that reaches no file, or no heading of it: "page:line: why". */
export function linkProblems(pages: readonly string[], read: ReadFile): string[] {
  const problems: string[] = [];
  for (const page of pages) {
    const text = read(page);
    if (typeof text !== 'string') {
      problems.push(`${page}: no such page`);
      continue;
    }
    for (const { target, line } of linksOf(text)) {
      if (EXTERNAL.test(target)) continue;
      const at = `${page}:${line}: (${target})`;
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const file = path === '' ? page : normalize(join(dirname(page), decodeURI(path)));
      if (file.startsWith('..') || target.startsWith('/')) {
        problems.push(`${at} leaves the repository; link relative to the page, inside it`);
        continue;
      }
      const found = read(file);
      if (found === undefined) {
        problems.push(`${at} no such file: ${file}`);
      } else if (anchor !== undefined) {
        if (typeof found !== 'string' || !file.endsWith('.md')) problems.push(`${at} an anchor into ${file}, which is not a Markdown page`);
        else if (!anchorsOf(found).has(anchor)) problems.push(`${at} no heading in ${file} makes the anchor #${anchor}`);
      }
    }
  }
  return problems;
}

/** The pages a page links to, as paths from the repo root. */
export function linkedPages(page: string, md: string): Set<string> {
  return new Set(linksOf(md).filter((l) => !EXTERNAL.test(l.target) && !l.target.startsWith('#'))
    .map((l) => normalize(join(dirname(page), decodeURI(l.target.split('#')[0])))));
}

/** A table row's cells, trimmed; `\|` is a pipe inside a cell. */
const cellsOf = (line: string): string[] =>
  line.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));

export interface Table { header: string[]; rows: string[][] }

/** Every table of a page (or of part of one), outside code. */
export function tablesIn(md: string): Table[] {
  const tables: Table[] = [];
  let current: string[] = [];
  const flush = (): void => {
    if (current.length >= 2 && /^[\s|:-]+$/.test(current[1])) tables.push({ header: cellsOf(current[0]), rows: current.slice(2).map(cellsOf) });
    current = [];
  };
  for (const line of withoutFences(md).split('\n')) {
    if (line.trim().startsWith('|')) current.push(line);
    else flush();
  }
  flush();
  return tables;
}

/** The part of a page under a heading with this text, up to the next heading of the same or a higher level. */
export function sectionOf(md: string, heading: string): string {
  const lines = withoutFences(md).split('\n');
  const start = lines.findIndex((l) => { const m = /^(#{1,6})\s+(.+?)\s*$/.exec(l); return m !== null && m[2] === heading; });
  if (start === -1) throw new Error(`no heading "${heading}"`);
  const level = /^#+/.exec(lines[start])![0].length;
  const end = lines.findIndex((l, i) => i > start && /^#{1,6}\s/.test(l) && /^#+/.exec(l)![0].length <= level);
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/** The first table under a heading. */
export function tableUnder(md: string, heading: string): Table {
  const table = tablesIn(sectionOf(md, heading))[0];
  if (table === undefined) throw new Error(`no table under "${heading}"`);
  return table;
}

/** A cell's code span, e.g. "`rate_limited`" → "rate_limited"; undefined when the cell is not one. */
export const codeOf = (cell: string): string | undefined => /^`([^`]+)`$/.exec(cell)?.[1];

// A path from the repo root in code text: `src/proxy/endpoint-attempts.ts`, `plugins/<name>/`, `test/e2e/clients/responses-*.test.ts`.
const REPO_PATH = /(?<![\w./-])((?:src|plugins|test|bench)\/[\w.<>*/-]*)/g;

/** The repository paths a page names in code spans outside fenced blocks, each with its line; a `:line` suffix and trailing punctuation dropped. */
export function codePathsOf(md: string): Array<{ path: string; line: number }> {
  const text = withoutFences(md);
  const out: Array<{ path: string; line: number }> = [];
  for (const span of text.matchAll(/`([^`\n]+)`/g)) {
    const line = text.slice(0, span.index).split('\n').length;
    for (const m of span[1].matchAll(REPO_PATH)) out.push({ path: m[1].replace(/(:\d+)?[.,:;]*$/, ''), line });
  }
  return out;
}
