// JSON string escapes read as the characters they stand for. A string that
// holds JSON (a tool call's arguments, a tool result) may write a letter as
// \u0062 or an @ as \u0040; the model reads the letter, so the rules read it
// too. Each decoded character keeps the [start, end) of the escape it came
// from, so a match on the decoded text is redacted in the text as written and
// the JSON stays valid (a whole escape is replaced, never half of one).
//
//   decodeJsonEscapes('bob\\u0040example.com').text   // 'bob@example.com'
import type { MappedReading } from './fold-map';

/** The one-letter JSON escapes, by the letter after the backslash (also read, delta by delta, by src/output-rules/view.ts). */
export const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * `text` with its JSON escapes decoded (\uXXXX, each half of a surrogate pair
 * to its code unit, and \" \\ \/ \b \f \n \r \t), and per decoded character
 * its source; `text` itself, unmapped, when it has no escape. A backslash
 * that begins no escape stays as it is.
 */
export function decodeJsonEscapes(text: string): MappedReading {
  let at = text.indexOf('\\');
  if (at < 0) return { text };
  let out = '';
  const starts: number[] = [];
  const ends: number[] = [];
  let copied = 0;
  const copy = (to: number): void => {
    out += text.slice(copied, to);
    for (let i = copied; i < to; i++) { starts.push(i); ends.push(i + 1); }
  };
  while (at >= 0) {
    const next = text[at + 1];
    let decoded: string | undefined;
    let length = 2;
    if (next === 'u' && HEX4.test(text.slice(at + 2, at + 6))) {
      decoded = String.fromCharCode(parseInt(text.slice(at + 2, at + 6), 16));
      length = 6;
    } else if (next !== undefined) decoded = SIMPLE_ESCAPES[next];
    if (decoded === undefined) {
      at = text.indexOf('\\', at + 1);
      continue;
    }
    copy(at);
    out += decoded;
    starts.push(at);
    ends.push(at + length);
    copied = at + length;
    at = text.indexOf('\\', copied);
  }
  if (starts.length === 0) return { text };
  copy(text.length);
  return { text: out, starts, ends };
}
