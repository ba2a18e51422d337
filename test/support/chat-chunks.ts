// Chat-completions stream chunks as vLLM and SGLang send them, and the JSON
// answer the same chunks add up to (as a client SDK would add them), so a
// stream translation can be checked against the JSON translation.

type Delta = Record<string, unknown>;

export const chunk = (delta: Delta, finish_reason: string | null = null, extra: Delta = {}) =>
  ({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'qwen', choices: [{ index: 0, delta, finish_reason, ...extra }] });

/** A tool-call delta: id and name on a call's first delta only, arguments in pieces. */
export const toolDelta = (index: number, args: string, first?: { id: string; name: string }): Delta => ({
  tool_calls: [{ index, ...(first ? { id: first.id, type: 'function' } : {}), function: { ...(first ? { name: first.name } : {}), arguments: args } }],
});

export const usageChunk = (prompt: number, completion: number, cached?: number) => ({
  id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'qwen', choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }) },
});

/** The chat.completion the chunks add up to. */
export function assemble(chunks: object[]): Record<string, unknown> {
  const message: Record<string, any> = { role: 'assistant', content: '' };
  const calls: any[] = [];
  let reasoning = '';
  let choiceExtra: Delta = {};
  let usage: unknown;
  for (const c of chunks as any[]) {
    if (c.usage) usage = c.usage;
    const choice = c.choices?.[0];
    if (!choice) continue;
    const d = choice.delta ?? {};
    reasoning += d.reasoning_content ?? d.reasoning ?? '';
    message.content += d.content ?? '';
    for (const tc of d.tool_calls ?? []) {
      calls[tc.index] ??= { id: tc.id, type: 'function', function: { name: tc.function?.name, arguments: '' } };
      calls[tc.index].function.arguments += tc.function?.arguments ?? '';
    }
    if (choice.finish_reason) {
      const { index: _i, delta: _d, ...rest } = choice;
      choiceExtra = rest;
    }
  }
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (calls.length > 0) message.tool_calls = calls;
  return { id: 'chatcmpl-1', object: 'chat.completion', choices: [{ index: 0, message, ...choiceExtra }], ...(usage ? { usage } : {}) };
}
