// A POST's tool calls against the key's limits, all at once: the POST goes on
// only when every call in it is admitted; otherwise the gateway answers it
// whole and sends nothing on (a batch's admitted calls are given back and
// their requests answered "not processed", as for a refused tool).
import type { Principal } from '../auth/keys';
import { limitedCall, UNAVAILABLE_RETRY_MS, uncheckedCall } from './errors';
import type { Admit, McpLimits } from './limits';
import type { McpMessage, McpPost } from './messages';

export type CallsAdmitted =
  | { admitted: true; /** Gives every call's counts back: the POST was not sent on after all. */ undo(): void }
  | {
    admitted: false;
    outcome: 'limited' | 'limiter_unavailable';
    /** The gateway's answer to each refused call (undefined for the batch's other messages). */
    answerOf(m: McpMessage): object | undefined;
    /** When to try again: the latest of the refused calls'. */
    retryAfterMs: number;
  };

const NOTHING_COUNTED: CallsAdmitted = { admitted: true, undo: () => undefined };
const waitOf = (a: Admit): number => (a.verdict === 'limited' ? a.retryAfterMs : a.verdict === 'unavailable' ? UNAVAILABLE_RETRY_MS : 0);

/** The POST's tools/call messages (each with an id and a tool the key may call: checked before) against `server`'s limits. */
export async function admitCalls(limits: McpLimits, principal: Principal, server: string, post: McpPost): Promise<CallsAdmitted> {
  const calls = post.messages.filter((m) => m.method === 'tools/call' && m.tool !== undefined);
  if (calls.length === 0) return NOTHING_COUNTED;
  const admits = await Promise.all(calls.map((m) => limits.admitToolCall(principal, server, m.tool!)));
  const undo = (): void => { for (const a of admits) if (a.verdict === 'admitted') a.undo(); };
  if (admits.every((a) => a.verdict === 'admitted')) return { admitted: true, undo };
  undo();
  const byMessage = new Map(calls.map((m, i) => [m, admits[i]]));
  return {
    admitted: false,
    outcome: admits.some((a) => a.verdict === 'limited') ? 'limited' : 'limiter_unavailable',
    retryAfterMs: Math.max(...admits.map(waitOf)),
    answerOf: (m) => {
      const a = byMessage.get(m);
      if (a?.verdict === 'limited') return limitedCall(m.id!, a.retryAfterMs);
      return a?.verdict === 'unavailable' ? uncheckedCall(m.id!) : undefined;
    },
  };
}
