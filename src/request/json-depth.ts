// How deeply a JSON text nests objects and arrays, found without parsing it.
// JSON.parse takes 100,000 levels in its stride; every recursive step after it
// (validation, copying, serialising) then overflows the stack. So text from
// outside is measured first, in one linear pass that allocates nothing and
// skips string contents with indexOf. Pure, and independent of Express: the
// request reader uses it, and so can anything that parses a backend's answer.
//
//   if (jsonDepthExceeds(text)) refuse();   // then JSON.parse(text)

/**
 * The deepest nesting the gateway reads. Real requests and answers stay far
 * below it: a message's content part is 5 levels down, a tool's JSON schema
 * ten properties deep about 30. The call stack is nowhere near its edge here.
 */
export const MAX_JSON_DEPTH = 64;

const BACKSLASH = 0x5c;
const OTHER = 0;
const QUOTE = 1;
const OPEN = 2;
const CLOSE = 3;

// What each UTF-16 unit is to the scan: one load and one compare for every
// character that is not a quote or a bracket, about twice as fast as five
// compares on bodies made mostly of structure (numbers, short keys).
const CLASS = new Uint8Array(0x10000);
CLASS[0x22] = QUOTE; // "
CLASS[0x7b] = OPEN; // {
CLASS[0x5b] = OPEN; // [
CLASS[0x7d] = CLOSE; // }
CLASS[0x5d] = CLOSE; // ]

/**
 * True when `text` opens more than `max` objects or arrays inside one another
 * (`{}` is depth 1, `{"a":[]}` depth 2). Brackets inside strings do not count,
 * escaped quotes included. Malformed JSON is the parser's to report: the scan
 * only answers whether parsing it could build anything deeper than `max`.
 */
export function jsonDepthExceeds(text: string, max = MAX_JSON_DEPTH): boolean {
  const n = text.length;
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const kind = CLASS[text.charCodeAt(i)];
    if (kind === OTHER) continue;
    if (kind === QUOTE) {
      i = closingQuote(text, i);
      if (i === -1) return false; // an unterminated string: not JSON, and nothing deeper follows
    } else if (kind === OPEN) {
      if (++depth > max) return true;
    } else {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that closes the string opened at `open`, or -1. Strings are skipped with indexOf, not a character at a time. */
function closingQuote(text: string, open: number): number {
  let q = open;
  for (;;) {
    q = text.indexOf('"', q + 1);
    if (q === -1) return -1;
    // Escaped only by an odd run of backslashes: "a\"" continues, "a\\" ends.
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q;
  }
}
