// A POST's tool calls under the plugins' tool hooks, before and after the
// server: each call's arguments checked (a refused call answered here and
// never sent; a rewritten one sent as rewritten), and how its answer is to be
// relayed: the message that answers a call held (at most maxResultBytes) and,
// when a plugin reads results, checked. In a batch (2025-03-26's transport) a
// refused call answers the whole batch, as a tool the key may not call does.
//
//   const guard = await guardCalls(pipeline, who, json, post, limit, lists);
//   if ('answer' in guard) send(guard.answer); else relay(guard.body ?? bytes, guard.relay);
import type { Principal } from '../auth/keys';
import type { Pipeline } from '../pipeline/pipeline';
import { guardsTools, ToolStates } from '../pipeline/tool-runner';
import { callFailure } from './errors';
import { filterToolLists, type ToolAllowed } from './list-filter';
import type { JsonRpcId, McpPost } from './messages';
import type { CallRelay } from './result-hold';
import { nestsTooDeep, ToolCall } from './tool-call';
import { checkToolCall, checkToolResult, readsResults } from './tool-hooks';

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface Caller {
  requestId: string;
  principal: Principal;
  server: string;
  signal: AbortSignal;
}

export type Guarded = { answer: unknown } | { failure: 'invalid' } | { body?: Buffer; relay: CallRelay };

/** The arguments of a call, or the failure that answers it: an object, nesting no deeper than the gateway reads. */
function argumentsOf(params: unknown): Record<string, unknown> | 'arguments_invalid' | 'too_deep' {
  const args = isObject(params) ? params.arguments : undefined;
  if (args === undefined) return {};
  if (!isObject(args)) return 'arguments_invalid';
  return nestsTooDeep(args) ? 'too_deep' : args;
}

/** `pipeline` undefined: no plugin guards the calls; their answers are still held to the limit. */
export async function guardCalls(pipeline: Pipeline | undefined, who: Caller, json: unknown, post: McpPost, limit: number, lists?: { ids: ReadonlySet<JsonRpcId>; allowed: ToolAllowed }): Promise<Guarded> {
  const items: unknown[] = post.batch ? (json as unknown[]) : [json];
  // By the id's text: a client may take an answer's "8" for its request 8, so a server's answer cannot slip past under another form.
  const calls = new Map<string, { call: ToolCall; states: ToolStates }>();
  const answers = new Map<JsonRpcId, object>();
  const guarded = pipeline !== undefined && guardsTools(pipeline);
  const requests = post.messages.filter((m) => m.id !== undefined && m.method !== undefined);
  // A call with no id (a notification) could not be answered if refused; two requests with one id could not tell their results apart.
  if (guarded && (post.messages.some((m) => m.method === 'tools/call' && m.id === undefined) || new Set(requests.map((m) => String(m.id))).size < requests.length)) return { failure: 'invalid' };
  if (guarded) {
    for (const [i, m] of post.messages.entries()) {
      if (m.method !== 'tools/call' || m.id === undefined) continue;
      const args = argumentsOf((items[i] as Record<string, unknown>).params);
      if (typeof args === 'string') { answers.set(m.id, callFailure(m.id, args)); continue; }
      const call = new ToolCall(who.requestId, who.principal, who.server, m.tool!, args, who.signal);
      const states = new ToolStates(pipeline);
      const refused = await checkToolCall(pipeline!, call, states, m.id);
      if (refused !== undefined) answers.set(m.id, refused);
      else calls.set(String(m.id), { call, states });
    }
  }
  if (answers.size > 0) {
    const all = requests.map((m) => answers.get(m.id!) ?? { jsonrpc: '2.0', id: m.id, error: { code: -32000, message: 'Not processed: send this request again on its own.' } });
    return { answer: post.batch ? all : all[0] };
  }
  let body: Buffer | undefined;
  if ([...calls.values()].some((c) => c.call.rewritten)) {
    const sent = items.map((item, i) => {
      const c = post.messages[i].method === 'tools/call' ? calls.get(String(post.messages[i].id)) : undefined;
      return c?.call.rewritten ? { ...(item as object), params: { ...(item as { params: object }).params, arguments: c.call.arguments } } : item;
    });
    body = Buffer.from(JSON.stringify(post.batch ? sent : sent[0]));
  }
  const checksResults = guarded && readsResults(pipeline!);
  const rewriteOne = async (message: unknown): Promise<unknown> => {
    let out = lists === undefined ? undefined : filterToolLists(message, lists.ids, lists.allowed);
    const c = checksResults && isObject(message) && message.method === undefined && (typeof message.id === 'string' || typeof message.id === 'number') ? calls.get(String(message.id)) : undefined;
    if (c !== undefined) {
      const checked = await checkToolResult(pipeline!, c.call, c.states, message as Record<string, unknown>);
      if (checked !== message) out = checked;
    }
    return out;
  };
  const rewrite = checksResults || lists !== undefined ? async (message: unknown): Promise<unknown> => {
    if (!Array.isArray(message)) return rewriteOne(message);
    let changed = false;
    const out = [];
    for (const m of message) {
      const next = await rewriteOne(m);
      changed ||= next !== undefined;
      out.push(next ?? m);
    }
    return changed ? out : undefined;
  } : undefined;
  return {
    body,
    relay: {
      limit, rewrite, exceeded: false,
      // Past the limit every request of the POST goes unanswered by the server: the gateway answers each.
      tooLarge() {
        this.exceeded = true;
        const all = requests.map((m) => callFailure(m.id!, 'too_large', limit));
        return post.batch ? all : all[0];
      },
    },
  };
}

/** A response holding a tool's result: an id, and a result with a list of content blocks. */
const isToolResult = (m: unknown): m is { id: JsonRpcId } =>
  isObject(m) && m.method === undefined && (typeof m.id === 'string' || typeof m.id === 'number') && isObject(m.result) && Array.isArray(m.result.content);

/**
 * A GET stream carries no answers, but when it resumes one (Last-Event-ID),
 * which may replay an earlier tool call's result; and a server may put one
 * there anyway. The gateway cannot tie such a result to its call: when a
 * plugin reads results, it is answered with an error (call the tool again)
 * rather than passed unread; undefined when none does.
 */
export function guardResumed(pipeline: Pipeline | undefined, limit: number): CallRelay | undefined {
  if (pipeline === undefined || !guardsTools(pipeline) || !readsResults(pipeline)) return undefined;
  return {
    limit, exceeded: false,
    rewrite: async (message) => (isToolResult(message) ? callFailure(message.id, 'resumed') : undefined),
    tooLarge() {
      this.exceeded = true;
      return callFailure(null, 'too_large', limit);
    },
  };
}
