// The log lines the source can write, found in its syntax tree rather than by
// a regex over the text, so a call over several lines, a message chosen by a
// ternary, or a comment that shows a call are all read right. Two forms:
//
//   logger.warn({ open }, 'drain deadline reached: ending open requests');   // any receiver named log or logger
//   const MESSAGES = { down: ['warn', 'redis cannot answer'] };              // a [level, message] pair, for a table-driven logger[level](…)
//
// A call whose message is not a literal is reported as unread, so a test can
// refuse it rather than miss it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { ROOT } from './process';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LogLine { file: string; line: number; level: LogLevel; message: string }
export interface UnreadLog { file: string; line: number; level: LogLevel; text: string }

const isLevel = (name: string): name is LogLevel => (LOG_LEVELS as readonly string[]).includes(name);
// logger, log, this.logger, pipeline.logger, deps.log, logger.child({...}), …
const LOGGER = /(^|\.)(log|logger)$|(^|\.)(log|logger)\.child\(/i;

/** The literal strings an expression can be: a string, or each branch of a ternary; undefined if any branch is not literal. */
function literals(node: ts.Expression): string[] | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isParenthesizedExpression(node)) return literals(node.expression);
  if (ts.isConditionalExpression(node)) {
    const a = literals(node.whenTrue);
    const b = literals(node.whenFalse);
    return a && b ? [...a, ...b] : undefined;
  }
  return undefined;
}

/** The log lines of one source file's text; `file` names it in the results. */
export function logLinesOf(file: string, text: string): { lines: LogLine[]; unread: UnreadLog[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lines: LogLine[] = [];
  const unread: UnreadLog[] = [];
  const lineOf = (node: ts.Node): number => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const level = node.expression.name.text;
      const receiver = node.expression.expression.getText(source).replace(/\s+/g, '');
      if (isLevel(level) && LOGGER.test(receiver)) {
        const last = node.arguments[node.arguments.length - 1];
        const messages = last === undefined ? undefined : literals(last);
        if (messages === undefined) unread.push({ file, line: lineOf(node), level, text: node.getText(source) });
        else for (const message of messages) lines.push({ file, line: lineOf(node), level, message });
      }
    }
    if (ts.isArrayLiteralExpression(node) && node.elements.length === 2) {
      const [first, second] = node.elements;
      const level = ts.isStringLiteral(first) ? first.text : '';
      if (isLevel(level) && ts.isStringLiteral(second)) lines.push({ file, line: lineOf(node), level, message: second.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { lines, unread };
}

/** The files under these folders of the repo whose names match, as absolute paths (declaration files aside). */
export function repoFiles(dirs: readonly string[], name = /\.ts$/): string[] {
  const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : name.test(e.name) && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : []);
  return dirs.flatMap((d) => walk(join(ROOT, d)));
}

/** Every log line of the gateway's source: src/ and plugins/. */
export function gatewayLogLines(dirs: readonly string[] = ['src', 'plugins']): { lines: LogLine[]; unread: UnreadLog[] } {
  const all = { lines: [] as LogLine[], unread: [] as UnreadLog[] };
  for (const path of repoFiles(dirs)) {
    const found = logLinesOf(relative(ROOT, path), readFileSync(path, 'utf8'));
    all.lines.push(...found.lines);
    all.unread.push(...found.unread);
  }
  return all;
}

/** At warn or above: what an operator must be able to look up. */
export const isWarnOrAbove = (level: LogLevel): boolean => LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf('warn');
