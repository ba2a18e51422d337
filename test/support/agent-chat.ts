// Chat completions for the agent backend, as the backend of a translated
// route gets them: what a request offers (function tools, and custom tools
// for Codex's code mode, as chat's own custom tools or as the function with
// one `input` string a translated Responses request turns them into) and
// whether it carries a tool result, and the answer
// as a JSON completion or as chunks with `reasoning_content` (when thinking
// is asked for), `tool_calls` deltas, usage when stream_options asks for it,
// and [DONE].
import { contentText, pieces, roughTokens, sseFrame, type ScriptStep, type TurnView, type WireAnswer } from './agent-script';

/** A function that stands for a free-form tool: its one parameter is the `input` string. */
const isInputFunction = (fn: any): boolean => {
  const props = fn?.parameters?.properties;
  return props?.input?.type === 'string' && Object.keys(props).length === 1;
};

export function chatView(body: any): TurnView {
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((t: any) => {
    if (t?.type === 'function' && typeof t.function?.name === 'string') return [{ name: t.function.name, kind: isInputFunction(t.function) ? 'custom' as const : 'function' as const }];
    if (t?.type === 'custom' && typeof t.custom?.name === 'string') return [{ name: t.custom.name, kind: 'custom' as const }];
    return [];
  });
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  const result = messages.filter((m) => m?.role === 'tool').at(-1);
  const call = result === undefined ? undefined : messages.flatMap((m) => (m?.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls : []))
    .find((c: any) => c?.id === result.tool_call_id);
  return {
    tools,
    toolResult: result === undefined ? undefined : contentText(result.content),
    toolResultOf: call?.function?.name ?? call?.custom?.name,
    thinking: body.chat_template_kwargs?.enable_thinking === true,
  };
}

function toolCall(body: any, step: Extract<ScriptStep, { kind: 'call' }>, n: number): any {
  const id = `call_${n}`;
  if (step.tool !== 'custom') return { id, type: 'function', function: { name: step.name, arguments: step.input } };
  const native = (Array.isArray(body.tools) ? body.tools : []).some((t: any) => t?.type === 'custom' && t.custom?.name === step.name);
  if (native) return { id, type: 'custom', custom: { name: step.name, input: step.input } };
  return { id, type: 'function', function: { name: step.name, arguments: JSON.stringify({ input: step.input }) } };
}

/** The deltas that stream one tool call: its head with an empty body, then the body in pieces. */
function toolCallDeltas(call: any): any[] {
  if (call.type === 'custom') {
    return [{ index: 0, id: call.id, type: 'custom', custom: { name: call.custom.name, input: '' } },
      ...pieces(call.custom.input).map((input) => ({ index: 0, custom: { input } }))];
  }
  return [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
    ...pieces(call.function.arguments).map((args) => ({ index: 0, function: { arguments: args } }))];
}

export function chatAnswer(body: any, step: ScriptStep, n: number): WireAnswer {
  const text = step.kind === 'answer' ? step.text : step.preamble;
  const call = step.kind === 'call' ? toolCall(body, step, n) : undefined;
  const finish = call === undefined ? 'stop' : 'tool_calls';
  const promptTokens = roughTokens(body.messages);
  const completionTokens = roughTokens([step.thinking, text, call]);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const head = { id: `chatcmpl-agent-${n}`, created: Math.floor(Date.now() / 1000), model: body.model };
  const message = { role: 'assistant', content: text, refusal: null, ...(step.thinking === undefined ? {} : { reasoning_content: step.thinking }), ...(call === undefined ? {} : { tool_calls: [call] }) };
  const json = { ...head, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    sseFrame({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] });
  const frames = [
    chunk({ role: 'assistant', content: '' }),
    ...(step.thinking === undefined ? [] : pieces(step.thinking).map((reasoning_content) => chunk({ reasoning_content }))),
    ...pieces(text).map((content) => chunk({ content })),
    ...(call === undefined ? [] : toolCallDeltas(call).map((delta) => chunk({ tool_calls: [delta] }))),
    chunk({}, finish),
    ...(body.stream_options?.include_usage === true ? [sseFrame({ ...head, object: 'chat.completion.chunk', choices: [], usage })] : []),
    sseFrame('[DONE]'),
  ];
  return { json, frames };
}
