// Anthropic's Messages API for the agent backend: what a request offers and
// whether it carries a tool result, and the answer as a JSON message or as
// the event stream Claude Code reads (message_start, ping, content_block_*,
// message_delta, message_stop), a thinking block first when thinking is on.
import { contentText, pieces, roughTokens, sseFrame, type ScriptStep, type TurnView, type WireAnswer } from './agent-script';

export function messagesView(body: any): TurnView {
  // Client tools carry an input_schema; server tools (web search, …) a versioned type instead.
  const tools = (Array.isArray(body.tools) ? body.tools : [])
    .filter((t: any) => typeof t?.name === 'string' && t.input_schema !== undefined)
    .map((t: any) => ({ name: t.name, kind: 'function' as const }));
  const blocks = (Array.isArray(body.messages) ? body.messages : [])
    .filter((m: any) => m?.role === 'user' && Array.isArray(m.content))
    .flatMap((m: any) => m.content);
  const result = blocks.filter((b: any) => b?.type === 'tool_result').at(-1);
  const call = result === undefined ? undefined : (Array.isArray(body.messages) ? body.messages : [])
    .filter((m: any) => m?.role === 'assistant' && Array.isArray(m.content))
    .flatMap((m: any) => m.content)
    .find((b: any) => b?.type === 'tool_use' && b.id === result.tool_use_id);
  return {
    tools,
    toolResult: result === undefined ? undefined : contentText(result.content),
    toolResultOf: call?.name,
    thinking: body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive',
  };
}

/** The signature a thinking block carries (Anthropic's is opaque; clients send it back as they got it). */
export const THINKING_SIGNATURE = 'c2x1aWNlLXRlc3Qtc2lnbmF0dXJl';

function blockFrames(block: any, index: number): string[] {
  const frames: string[] = [];
  const event = (type: string, data: Record<string, unknown>) => frames.push(sseFrame({ type, ...data }, type));
  if (block.type === 'text') {
    event('content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (const text of pieces(block.text)) event('content_block_delta', { index, delta: { type: 'text_delta', text } });
  } else if (block.type === 'thinking') {
    event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    for (const thinking of pieces(block.thinking)) event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } });
    event('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } });
  } else {
    event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
    for (const partial of pieces(JSON.stringify(block.input))) event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: partial } });
  }
  event('content_block_stop', { index });
  return frames;
}

export function messagesAnswer(body: any, step: ScriptStep, n: number): WireAnswer {
  const content: any[] = step.kind === 'answer'
    ? [{ type: 'text', text: step.text }]
    : [{ type: 'text', text: step.preamble }, { type: 'tool_use', id: `toolu_${String(n).padStart(4, '0')}`, name: step.name, input: step.args }];
  if (step.thinking !== undefined) content.unshift({ type: 'thinking', thinking: step.thinking, signature: THINKING_SIGNATURE });
  const stopReason = step.kind === 'answer' ? 'end_turn' : 'tool_use';
  const usage = { input_tokens: roughTokens(body.messages), cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: roughTokens(content) };
  const id = `msg_${String(n).padStart(6, '0')}`;
  const json = { id, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stopReason, stop_sequence: null, usage };
  const frames = [
    sseFrame({ type: 'message_start', message: { ...json, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }, 'message_start'),
    sseFrame({ type: 'ping' }, 'ping'),
    ...content.flatMap(blockFrames),
    sseFrame({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }, 'message_delta'),
    sseFrame({ type: 'message_stop' }, 'message_stop'),
  ];
  return { json, frames };
}
