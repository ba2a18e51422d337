// Runs a pipeline's hooks for one MCP tool call, with the promises the
// request hooks keep: chain order (transform plugins first, so a redaction is
// what a filter reads), one fresh state per plugin and call, nothing more
// started once the client has left. A refusal (GatewayError) passes as it is;
// any other failure is logged with the plugin's name and the request id:
// thrown from onToolCall (the call is not sent unchecked), skipped from the
// result's hooks (a failing hook never breaks the answer it observes).
import type { Logger } from 'pino';
import { isGatewayError } from '../contract/errors';
import type { OutputRules, ToolCallContext, ToolResult } from '../contract/plugin';
import type { OutputPolicy } from './output-policy';
import type { Pipeline } from './pipeline';

/** Each plugin's state for one call, by slot, made on first use. */
export class ToolStates {
  private readonly made: unknown[] = [];
  constructor(private readonly pipeline: Pipeline) {}

  of(slot: number): unknown {
    const make = this.pipeline.states[slot];
    if (make === undefined) return undefined;
    return slot in this.made ? this.made[slot] : (this.made[slot] = make());
  }
}

/** Whether any plugin guards tool calls at all: without one, a call passes as its bytes. */
export const guardsTools = (p: Pipeline): boolean => p.onToolCall.length + p.toolResultRules.length + p.onToolResult.length > 0;

/**
 * Every onToolCall hook in chain order; rejects with the first refusal (or a
 * hook's failure, logged), or once the client has left: a call whose hooks
 * did not all run is never sent.
 */
export async function runToolCallHooks(pipeline: Pipeline, call: ToolCallContext, states: ToolStates): Promise<void> {
  for (const hook of pipeline.onToolCall) {
    if (call.signal.aborted) throw new Error('the client left before the tool call was checked');
    try {
      await hook.run(call, states.of(hook.slot));
    } catch (err) {
      if (!isGatewayError(err)) logToolHookFailure(pipeline.logger, call, hook.name, 'onToolCall', err);
      throw err;
    }
  }
}

/** The rules the plugins give this call's result, in chain order; undefined when none does. */
export function runToolResultRulesHooks(pipeline: Pipeline, call: ToolCallContext, states: ToolStates): OutputPolicy | undefined {
  let rules: Array<{ plugin: string; rules: OutputRules }> | undefined;
  for (const hook of pipeline.toolResultRules) {
    try {
      const given = hook.run(call, states.of(hook.slot));
      if (given !== undefined && given !== null) (rules ??= []).push({ plugin: hook.name, rules: given });
    } catch (err) {
      logToolHookFailure(pipeline.logger, call, hook.name, 'toolResultRules', err);
    }
  }
  return rules === undefined ? undefined : { rules, counter: pipeline.outputCounter };
}

const isResult = (v: unknown): v is ToolResult => v !== null && typeof v === 'object' && Array.isArray((v as ToolResult).content);

/** The result through every onToolResult hook; each may replace it. Rejects with a refusal (GatewayError). */
export async function runToolResultHooks(pipeline: Pipeline, call: ToolCallContext, result: ToolResult, states: ToolStates): Promise<ToolResult> {
  let current = result;
  for (const hook of pipeline.onToolResult) {
    try {
      const next = await hook.run(call, current, states.of(hook.slot));
      if (isResult(next)) current = next;
      else if (next !== undefined && next !== null) throw new Error('onToolResult returned something that is not a tool result (an object with a content array); the result was kept');
    } catch (err) {
      if (isGatewayError(err)) throw err;
      logToolHookFailure(pipeline.logger, call, hook.name, 'onToolResult', err);
    }
  }
  return current;
}

export function logToolHookFailure(logger: Logger, call: ToolCallContext, plugin: string, hook: string, err: unknown): void {
  logger.error({ requestId: call.id, plugin, hook, err: (err as Error)?.message }, 'plugin hook failed');
}
