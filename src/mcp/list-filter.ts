// tools/list answers, filtered: the tools a key may not call are taken out
// before the client sees the list. Only a response whose id is one of the
// list requests' is rewritten; every other message passes as it came.
import type { JsonRpcId } from './messages';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether the server's tool of this name may be listed to the key. */
export type ToolAllowed = (name: string) => boolean;

/** The message with its disallowed tools removed, or undefined when it needs no change. */
function filterMessage(message: unknown, ids: ReadonlySet<JsonRpcId>, allowed: ToolAllowed): Record<string, unknown> | undefined {
  if (!isObject(message) || message.method !== undefined) return undefined;
  if ((typeof message.id !== 'string' && typeof message.id !== 'number') || !ids.has(message.id)) return undefined;
  const result = message.result;
  if (!isObject(result) || !Array.isArray(result.tools)) return undefined;
  const tools = result.tools.filter((t) => isObject(t) && typeof t.name === 'string' && allowed(t.name));
  if (tools.length === result.tools.length) return undefined;
  return { ...message, result: { ...result, tools } };
}

/**
 * An answer (one message, or a batch's array) with its tools/list results
 * filtered; undefined when nothing in it changes, so its bytes pass as they came.
 */
export function filterToolLists(answer: unknown, ids: ReadonlySet<JsonRpcId>, allowed: ToolAllowed): unknown {
  if (!Array.isArray(answer)) return filterMessage(answer, ids, allowed);
  let changed = false;
  const out = answer.map((m) => {
    const filtered = filterMessage(m, ids, allowed);
    if (filtered === undefined) return m;
    changed = true;
    return filtered;
  });
  return changed ? out : undefined;
}

/** The text's JSON, or undefined when it is not JSON (then it passes untouched). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
