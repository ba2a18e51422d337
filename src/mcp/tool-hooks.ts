// The plugins' tool hooks on one tool call, as two functions of the chain and
// the call: one before the call is sent (onToolCall: refuse, or rewrite the
// arguments), one on its result (toolResultRules, then onToolResult). Each
// returns what to send: the call's arguments or result as they now are, or
// the JSON-RPC error that answers the call instead. Whatever endpoint relays
// the call (/mcp/<server>, a federated /mcp) calls these the same way.
//
//   const checked = await checkToolCall(pipeline, call, states);     // { ok: true } | { answer: {jsonrpc, id, error} }
//   const message = await checkToolResult(pipeline, call, states, id, result);
import { isGatewayError } from '../contract/errors';
import type { ToolResult } from '../contract/plugin';
import type { Pipeline } from '../pipeline/pipeline';
import { runToolCallHooks, runToolResultHooks, runToolResultRulesHooks, type ToolStates } from '../pipeline/tool-runner';
import { callFailure, toolRefused } from './errors';
import type { JsonRpcId } from './messages';
import { applyResultRules } from './result-rules';
import { nestsTooDeep, type ToolCall } from './tool-call';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A refusal or a failure, as the answer to call `id`. */
function answerFor(id: JsonRpcId, err: unknown, stage: 'call' | 'result'): Record<string, unknown> {
  return isGatewayError(err) ? toolRefused(id, err, stage) : callFailure(id, 'check_failed');
}

/** Runs the call's onToolCall hooks: undefined when it may go on (its arguments as call.arguments now are), else the answer. */
export async function checkToolCall(pipeline: Pipeline, call: ToolCall, states: ToolStates, id: JsonRpcId): Promise<object | undefined> {
  try {
    await runToolCallHooks(pipeline, call, states);
    return undefined;
  } catch (err) {
    return answerFor(id, err, 'call');
  }
}

/** Whether a call's result is read at all: some plugin gives result rules or an onToolResult hook. */
export const readsResults = (pipeline: Pipeline): boolean => pipeline.toolResultRules.length + pipeline.onToolResult.length > 0;

/**
 * The server's answer to the call (`message`: its JSON-RPC response) with the
 * result's hooks applied: the same object when nothing changed, a new one
 * when the result was masked, cut or replaced, or the error that answers the
 * call instead. An error response passes as it came.
 */
export async function checkToolResult(pipeline: Pipeline, call: ToolCall, states: ToolStates, message: Record<string, unknown>): Promise<Record<string, unknown>> {
  const id = message.id as JsonRpcId;
  const raw = message.result;
  if (!isObject(raw)) return message;
  if (nestsTooDeep(raw)) return callFailure(id, 'result_too_deep');
  // Content that is not a list of blocks is not the specification's: it is sent on as none, never unread.
  const listed = Array.isArray(raw.content);
  const given = { ...raw, content: listed ? raw.content : [] } as ToolResult;
  let result = given;
  try {
    const policy = runToolResultRulesHooks(pipeline, call, states);
    if (policy !== undefined) result = applyResultRules(policy, result).result;
    result = await runToolResultHooks(pipeline, call, result, states);
  } catch (err) {
    return answerFor(id, err, 'result');
  }
  return result === given && listed ? message : { ...message, result };
}
