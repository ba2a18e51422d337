// How deep JSON text nests, found by one linear scan of the text (brackets
// outside strings), before anything recursive touches it. JSON.parse copes
// with deep nesting, but re-serialising or walking the result recurses, and
// 100,000 levels overflow the stack: a request becomes a 500, a backend's
// answer a crash. Nothing an API legitimately sends nests this deep.

/** The deepest nesting accepted, in requests and in backends' answers. */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 123; // {
const OPEN_BRACKET = 91; // [
const CLOSE_BRACE = 125; // }
const CLOSE_BRACKET = 93; // ]
const QUOTE = 34; // "
const BACKSLASH = 92; // \

/** True when `text` opens more than `max` objects or arrays inside one another. */
export function jsonDepthExceeds(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
