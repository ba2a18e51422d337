// Every piece of text a Messages request forwards, for the content filter and
// the token estimate: system, message texts, tool calls and results, thinking,
// tool definitions, and every string in the other fields (stop sequences,
// output schemas, tool_choice, fields kept for a native backend).
// Not read: image data, and redacted thinking (ciphertext no model reads as text).
import { paramTexts } from '../../request/chat-params';
import type { ContentBlockParam, CountTokensRequest, KnownBlock } from './request';

/** Fields read block by block below; every other field is walked for strings. */
const READ_APART = new Set(['model', 'messages', 'system', 'max_tokens', 'stream']);

export function messagesTexts(req: CountTokensRequest, out: string[]): void {
  if (typeof req.system === 'string') out.push(req.system);
  else if (req.system) for (const b of req.system) out.push(b.text);
  for (const m of req.messages) {
    if (typeof m.content === 'string') out.push(m.content);
    else for (const b of m.content) blockTexts(b, out);
  }
  const rest: Record<string, unknown> = {};
  for (const key in req) if (!READ_APART.has(key)) rest[key] = req[key];
  paramTexts(rest, out);
}

function blockTexts(raw: ContentBlockParam, out: string[]): void {
  const b = raw as KnownBlock;
  switch (b.type) {
    case 'text': out.push(b.text); break;
    case 'thinking': out.push(b.thinking); break;
    case 'tool_use': out.push(b.name, JSON.stringify(b.input)); break;
    case 'tool_result':
      if (typeof b.content === 'string') out.push(b.content);
      else if (b.content) for (const part of b.content) blockTexts(part as ContentBlockParam, out);
      break;
    case 'image': case 'redacted_thinking': break;
    default: otherTexts(raw, out);
  }
}

/**
 * A block the gateway does not declare (a document, a search result): its
 * strings may all reach the model, except an encoded source (a PDF's base64).
 */
function otherTexts(raw: ContentBlockParam, out: string[]): void {
  const { source, ...rest } = raw as { source?: { type?: unknown; data?: unknown; content?: unknown } };
  paramTexts(rest, out);
  if (source?.type === 'text' && typeof source.data === 'string') out.push(source.data);
  else if (source?.type === 'content') {
    if (typeof source.content === 'string') out.push(source.content);
    else if (Array.isArray(source.content)) for (const b of source.content) blockTexts(b as ContentBlockParam, out);
  }
}
