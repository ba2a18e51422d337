// One tools/call as the plugins' tool hooks see it (ToolCallContext): who
// calls which tool of which server, and its arguments, whose every string
// (keys as well as values: a model reads `{"bob@example.com": 1}` as it
// reads a value) is a text a filter matches and a redaction rewrites.
//
//   const call = new ToolCall(requestId, principal, 'github', 'search', { q: 'bob@example.com' }, signal);
//   call.rewriteArguments((t) => t.replace(EMAIL, '[EMAIL_1]'));   // what the server will receive
import type { Principal } from '../auth/keys';
import type { ToolCallContext } from '../contract/plugin';
import { MAX_JSON_DEPTH } from '../request/json-depth';
import { rewriteStrings } from '../request/rewrite-strings';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether `value` nests objects and arrays deeper than the gateway reads (what lies past that could not be checked). */
export function nestsTooDeep(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth >= MAX_JSON_DEPTH) return true;
  for (const v of Array.isArray(value) ? value : Object.values(value)) if (nestsTooDeep(v, depth + 1)) return true;
  return false;
}

/** Every string of a JSON value (its keys too), in order. */
export function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (isObject(value)) {
    for (const key of Object.keys(value)) {
      out.push(key);
      stringsOf(value[key], out);
    }
  }
  return out;
}

export class ToolCall implements ToolCallContext {
  private args: Record<string, unknown>;
  private strings?: string[];
  /** Set once a hook rewrote the arguments: the call's message is then sent as rewritten. */
  rewritten = false;

  /** `args`: the call's params.arguments, an object (the caller checks; {} when absent) no deeper than the gateway reads. */
  constructor(readonly id: string, readonly principal: Principal, readonly server: string, readonly tool: string, args: Record<string, unknown>, readonly signal: AbortSignal) {
    this.args = args;
  }

  get arguments(): Readonly<Record<string, unknown>> {
    return this.args;
  }

  get texts(): readonly string[] {
    return (this.strings ??= stringsOf(this.args));
  }

  rewriteArguments(fn: (text: string) => string): boolean {
    const next = rewriteStrings(this.args, fn, true, true);
    if (next === this.args) return false;
    this.args = next;
    this.strings = undefined;
    this.rewritten = true;
    return true;
  }
}
