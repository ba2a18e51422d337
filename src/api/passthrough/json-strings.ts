// Every string in a parsed JSON body, object keys included: the text a
// pass-through request forwards, for the policy to read (ctx.texts). The
// gateway does not know the shape of a pass-through endpoint's body, so it
// reads all of it: a term hidden in a nested field or a key is found too.
//
//   jsonStrings({ input: ["a", { b: "c" }] })   // ["input", "a", "b", "c"]
import { GatewayError } from '../../contract/errors';
import { MAX_JSON_DEPTH } from '../../request/json-depth';

/**
 * Walks with its own stack, not recursion. The body reader has already
 * refused bodies nested deeper than MAX_JSON_DEPTH; the bound is checked
 * again here so the walk never depends on who parsed the value.
 */
export function jsonStrings(value: unknown, maxDepth = MAX_JSON_DEPTH): string[] {
  const out: string[] = [];
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: v, depth } = stack.pop()!;
    if (typeof v === 'string') {
      out.push(v);
    } else if (v !== null && typeof v === 'object') {
      if (depth >= maxDepth) throw new GatewayError('invalid_json', `The request body nests objects and arrays more than ${maxDepth} levels deep. Send at most ${maxDepth} levels.`);
      if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth: depth + 1 });
      } else {
        const entries = Object.entries(v);
        for (let i = entries.length - 1; i >= 0; i--) {
          stack.push({ value: entries[i][1], depth: depth + 1 });
          stack.push({ value: entries[i][0], depth: depth + 1 });
        }
      }
    }
  }
  return out;
}
