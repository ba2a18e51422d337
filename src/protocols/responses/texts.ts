// Every piece of text a Responses request forwards, for the content filter
// and the token estimate: instructions, the text of every input item (a
// reasoning item's summary too: a native backend reads it), tool calls and
// results, and every string of every other field (tool definitions and
// their schemas, the output schema, ...). Images and files are not text.
import { paramTexts } from '../../request/chat-params';
import type { ContentPart, InputItem, ResponsesRequest } from './types';

/** Fields whose text is gathered apart (input, instructions) or is no text a model reads. */
const NOT_TEXT = new Set(['model', 'input', 'instructions', 'stream']);
/** Message parts that carry data, not text. */
const DATA_PARTS = new Set(['input_image', 'input_file', 'input_audio']);

export function responsesTexts(req: ResponsesRequest, out: string[]): void {
  if (typeof req.instructions === 'string') out.push(req.instructions);
  if (typeof req.input === 'string') out.push(req.input);
  else if (req.input) itemTexts(req.input, out);
  const rest: Record<string, unknown> = {};
  for (const key in req) if (!NOT_TEXT.has(key)) rest[key] = req[key];
  paramTexts(rest, out);
}

/** The text of input items: a request's own, or the stored ones an earlier response left (previous_response_id). */
export function itemTexts(items: readonly InputItem[], out: string[]): void {
  for (const item of items) {
    const it = item as Record<string, any>;
    switch (item.type ?? ('role' in item ? 'message' : 'item_reference')) {
      case 'message': contentTexts(it.content, out); break;
      case 'function_call': out.push(it.name, it.arguments); if (typeof it.namespace === 'string') out.push(it.namespace); break;
      case 'custom_tool_call': out.push(it.name, it.input); break;
      case 'function_call_output': case 'custom_tool_call_output': case 'local_shell_call_output': contentTexts(it.output, out); break;
      case 'reasoning':
        for (const part of it.summary ?? []) out.push(part.text);
        for (const part of it.content ?? []) out.push(part.text);
        break;
      case 'local_shell_call': paramTexts(it.action, out); break;
      case 'item_reference': break;
      // A kind no chat backend takes, relayed as sent to a native one: all its strings.
      default: paramTexts(it, out);
    }
  }
}

function contentTexts(content: string | readonly ContentPart[], out: string[]): void {
  if (typeof content === 'string') {
    out.push(content);
    return;
  }
  for (const part of content) {
    const p = part as Record<string, any>;
    if (part.type === 'input_text' || part.type === 'output_text') out.push(p.text);
    else if (part.type === 'refusal') out.push(p.refusal);
    else if (!DATA_PARTS.has(part.type)) paramTexts(p, out);
  }
}
