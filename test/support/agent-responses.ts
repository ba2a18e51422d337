// OpenAI's Responses API for the agent backend: what a request offers and
// whether it carries a tool result, and the answer as a JSON response or as
// the full event stream (response.created … response.completed, each frame
// with its `event:` line and sequence_number) that Codex reads.
import { contentText, pieces, roughTokens, sseFrame, type ScriptStep, type ToolOffer, type TurnView, type WireAnswer } from './agent-script';

// Tools sit in `tools` and, for Codex's code mode, in `additional_tools` input
// items; namespaces nest them.
function collectTools(tools: unknown, into: ToolOffer[], namespace?: string): ToolOffer[] {
  if (!Array.isArray(tools)) return into;
  for (const t of tools) {
    if (t?.type === 'namespace') collectTools(t.tools, into, String(t.name));
    else if (t?.type === 'function' || t?.type === 'custom') into.push({ name: String(t.name), kind: t.type, ...(namespace === undefined ? {} : { namespace }) });
    else if (t?.type === 'local_shell') into.push({ name: 'local_shell', kind: 'local_shell' });
  }
  return into;
}

export function responsesView(body: any): TurnView {
  const input: any[] = Array.isArray(body.input) ? body.input : [];
  const tools = collectTools(body.tools, []);
  for (const item of input) if (item?.type === 'additional_tools') collectTools(item.tools, tools);
  const result = input.filter((item) => typeof item?.type === 'string' && item.type.endsWith('_call_output')).at(-1);
  return { tools, toolResult: result === undefined ? undefined : contentText(result.output) };
}

export const message = (id: string, text: string) => ({
  type: 'message', id, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }],
});

function callItem(step: Extract<ScriptStep, { kind: 'call' }>, n: number): any {
  const callId = `call_${n}`;
  if (step.tool === 'custom') return { type: 'custom_tool_call', id: `ctc_${n}`, call_id: callId, name: step.name, input: step.input, status: 'completed' };
  if (step.tool === 'local_shell') return { type: 'local_shell_call', id: `lsh_${n}`, call_id: callId, action: step.args, status: 'completed' };
  const namespace = step.namespace === undefined ? {} : { namespace: step.namespace };
  return { type: 'function_call', id: `fc_${n}`, call_id: callId, name: step.name, ...namespace, arguments: step.input, status: 'completed' };
}

/** The events that build one output item, from output_item.added to output_item.done. */
function itemEvents(item: any, outputIndex: number): Array<[string, Record<string, unknown>]> {
  const at = { item_id: item.id, output_index: outputIndex };
  const events: Array<[string, Record<string, unknown>]> = [];
  if (item.type === 'message') {
    const text: string = item.content[0].text;
    const part = { type: 'output_text', text: '', annotations: [] };
    events.push(['response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } }]);
    events.push(['response.content_part.added', { ...at, content_index: 0, part }]);
    for (const delta of pieces(text)) events.push(['response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] }]);
    events.push(['response.output_text.done', { ...at, content_index: 0, text, logprobs: [] }]);
    events.push(['response.content_part.done', { ...at, content_index: 0, part: { ...part, text } }]);
  } else if (item.type === 'function_call') {
    events.push(['response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } }]);
    for (const delta of pieces(item.arguments)) events.push(['response.function_call_arguments.delta', { ...at, delta }]);
    events.push(['response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments }]);
  } else if (item.type === 'custom_tool_call') {
    events.push(['response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress', input: '' } }]);
    for (const delta of pieces(item.input)) events.push(['response.custom_tool_call_input.delta', { ...at, delta }]);
    events.push(['response.custom_tool_call_input.done', { ...at, input: item.input }]);
  } else {
    events.push(['response.output_item.added', { output_index: outputIndex, item: { ...item, status: 'in_progress' } }]);
  }
  events.push(['response.output_item.done', { output_index: outputIndex, item }]);
  return events;
}

export function responsesAnswer(body: any, step: ScriptStep, n: number): WireAnswer {
  const output = step.kind === 'answer'
    ? [message(`msg_${n}`, step.text)]
    : [message(`msg_${n}`, step.preamble), callItem(step, n)];
  return responseWire(body, output, n);
}

/** A completed response with these output items (message, function_call, custom_tool_call, …), as JSON and as its full event stream. */
export function responseWire(body: any, output: any[], n: number): WireAnswer {
  const inputTokens = roughTokens(body.input);
  const outputTokens = roughTokens(output);
  const base = {
    id: `resp_${n}`, object: 'response', created_at: Math.floor(Date.now() / 1000), model: body.model,
    error: null, incomplete_details: null, instructions: body.instructions ?? null, parallel_tool_calls: body.parallel_tool_calls ?? true,
    tool_choice: body.tool_choice ?? 'auto', tools: body.tools ?? [], store: body.store ?? true, previous_response_id: body.previous_response_id ?? null,
    text: body.text ?? { format: { type: 'text' } },
  };
  const usage = {
    input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + outputTokens,
  };
  const done = { ...base, status: 'completed', output, usage };
  const events: Array<[string, Record<string, unknown>]> = [
    ['response.created', { response: { ...base, status: 'in_progress', output: [], usage: null } }],
    ['response.in_progress', { response: { ...base, status: 'in_progress', output: [], usage: null } }],
    ...output.flatMap((item, i) => itemEvents(item, i)),
    ['response.completed', { response: done }],
  ];
  return { json: done, frames: events.map(([type, data], i) => sseFrame({ type, sequence_number: i, ...data }, type)) };
}
