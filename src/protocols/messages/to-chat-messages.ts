// Messages' conversation as chat-completions messages. Text blocks of one turn
// are joined with a blank line (a string is what every chat template reads);
// a turn with images keeps parts. What chat cannot carry is named in `dropped`.
import type { ChatMessage, ContentPart, ToolCall } from '../../contract/types';
import type { ContentBlockParam, KnownBlock, MessageParam, MessagesRequest, ResultPart } from './request';

/** A chat message, with the prior reasoning some templates read (vLLM's `reasoning`, formerly `reasoning_content`). */
export type TranslatedMessage = ChatMessage & { reasoning?: string; reasoning_content?: string };

export interface MessageOptions {
  /** Send assistant thinking back as `reasoning` and `reasoning_content` (for templates that show it); default: drop it. */
  reasoningHistory?: boolean;
}

/** Prefixed to a tool result with `is_error: true`, since a chat tool message has no such flag. */
export const TOOL_ERROR_PREFIX = 'Error: ';

const JOIN = '\n\n';

export function chatMessages(req: Pick<MessagesRequest, 'system' | 'messages'>, dropped: Set<string>, options: MessageOptions = {}): TranslatedMessage[] {
  const out: TranslatedMessage[] = [];
  const system = req.system === undefined ? '' : systemText(req.system, dropped);
  if (system !== '') out.push({ role: 'system', content: system });
  for (const m of req.messages) {
    if (m.role === 'system') out.push({ role: 'system', content: systemText(m.content, dropped) });
    else if (m.role === 'user') userMessages(m.content, out, dropped);
    else out.push(assistantMessage(m.content, dropped, options));
  }
  return out;
}

function systemText(system: string | { text: string; cache_control?: unknown }[], dropped: Set<string>): string {
  if (typeof system === 'string') return system;
  for (const b of system) noteCacheControl(b, dropped);
  return system.map((b) => b.text).join(JOIN);
}

/** Tool results first, as `tool` messages in order; then the turn's other content (and any image a result held). */
function userMessages(content: MessageParam['content'], out: TranslatedMessage[], dropped: Set<string>): void {
  if (typeof content === 'string') return void out.push({ role: 'user', content });
  const resultImages: ContentPart[] = [];
  const parts: ContentPart[] = [];
  for (const raw of content) {
    const b = raw as KnownBlock;
    noteCacheControl(b, dropped);
    if (b.type === 'tool_result') {
      const texts: string[] = [];
      if (typeof b.content === 'string') texts.push(b.content);
      else if (b.content) for (const part of b.content) partOf(part, texts, resultImages, dropped);
      const text = texts.join(JOIN);
      out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error === true ? TOOL_ERROR_PREFIX + text : text });
    } else {
      const texts: string[] = [];
      partOf(raw, texts, parts, dropped);
      for (const text of texts) parts.push({ type: 'text', text });
    }
  }
  const all = resultImages.length === 0 ? parts : [...resultImages, ...parts];
  if (all.length === 0) return;
  const textOnly = all.every((p) => p.type === 'text');
  out.push({ role: 'user', content: textOnly ? all.map((p) => (p as { text: string }).text).join(JOIN) : all });
}

/** A user-side block: its text into `texts`, an image into `images`, anything else named in `dropped`. */
function partOf(raw: ContentBlockParam | ResultPart | { type: string }, texts: string[], images: ContentPart[], dropped: Set<string>): void {
  const b = raw as KnownBlock;
  noteCacheControl(b, dropped);
  if (b.type === 'text') texts.push(b.text);
  else if (b.type === 'image' && b.source.type === 'base64') images.push(imagePart(`data:${b.source.media_type};base64,${b.source.data}`));
  else if (b.type === 'image' && b.source.type === 'url') images.push(imagePart(b.source.url));
  else if (b.type === 'image') dropped.add(`content.image.${b.source.type}`);
  else if (!documentText(raw, texts)) dropped.add(`content.${b.type}`);
}

const imagePart = (url: string): ContentPart => ({ type: 'image_url', image_url: { url } });

/** A document whose source is plain text is text; a PDF or a file reference is not. */
function documentText(raw: { type: string }, texts: string[]): boolean {
  const source = (raw as { source?: { type?: unknown; data?: unknown } }).source;
  if (raw.type !== 'document' || source?.type !== 'text' || typeof source.data !== 'string') return false;
  texts.push(source.data);
  return true;
}

function assistantMessage(content: MessageParam['content'], dropped: Set<string>, options: MessageOptions): TranslatedMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const thinking: string[] = [];
  const calls: ToolCall[] = [];
  for (const raw of content) {
    const b = raw as KnownBlock;
    noteCacheControl(b, dropped);
    if (b.type === 'text') texts.push(b.text);
    else if (b.type === 'tool_use') calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input) } });
    else if (b.type === 'thinking' && options.reasoningHistory === true) thinking.push(b.thinking);
    else dropped.add(`content.${b.type}`);
  }
  const message: TranslatedMessage = { role: 'assistant', content: texts.length > 0 ? texts.join(JOIN) : calls.length > 0 ? null : '' };
  if (calls.length > 0) message.tool_calls = calls;
  if (thinking.length > 0) message.reasoning = message.reasoning_content = thinking.join(JOIN);
  return message;
}

/** Prompt caching is automatic on a chat backend (prefix caching): the breakpoints are dropped, and counted. */
function noteCacheControl(block: object, dropped: Set<string>): void {
  if ((block as { cache_control?: unknown }).cache_control != null) dropped.add('cache_control');
}
