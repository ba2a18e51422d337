// Output rules on the JSON answers of a backend that serves the client's
// protocol itself, every text the client reads, in answer order, read as
// the stream of the same answer is: a Responses object's output text
// (across parts and items, as one text), refusals, reasoning summaries and
// text, function arguments and custom tool input; a Messages answer's text
// blocks (as one text), their citations, thinking, and the keys and values
// of a tool call's input. A mask replaces the match; a block keeps what
// came before it, drops what came after (and the call the match falls in),
// and ends the answer as the protocol says a filter ended it.
import type { Context } from '../pipeline/context';
import { rewriteStrings } from '../request/rewrite-strings';
import { PartTexts, type Loose, type PartKey } from './native-events';
import { mapItemTexts, partKey } from './responses-parts';
import { OutputText } from './text';

const isRecord = (v: unknown): v is Loose => v !== null && typeof v === 'object' && !Array.isArray(v);
const CALLS = new Set(['function_call', 'custom_tool_call']);

/** A Responses object from a backend that serves the API, checked in place. */
export function checkResponseJson(ctx: Context, body: unknown): void {
  if (ctx.forwarding.output === undefined || !isRecord(body) || !Array.isArray(body.output)) return;
  const text = new OutputText(ctx.forwarding.output, ctx.forwarding);
  const parts = new PartTexts(text, partKey);
  const output: unknown[] = [];
  for (const [i, item] of body.output.entries()) {
    const checked = mapItemTexts(i, item, (part, t) => parts.whole(part, t));
    if (text.blocked === undefined) output.push(checked);
    else {
      if (!CALLS.has(checked?.type)) output.push({ ...checked, status: 'incomplete' });
      break;
    }
  }
  parts.finish();
  body.output = output;
  if (text.blocked !== undefined) Object.assign(body, { status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
}

/** Text blocks read as one text, thinking as another (parts "<index>:t", "<index>:k"). */
const messageKey = (part: string): PartKey => (part.endsWith(':t') ? { key: 'text', shared: true, kind: 'text' } : { key: 'thinking', shared: true, kind: 'reasoning' });

/** A Messages answer from a backend that serves the API, checked in place. */
export function checkMessageJson(ctx: Context, body: unknown): void {
  if (ctx.forwarding.output === undefined || !isRecord(body) || !Array.isArray(body.content)) return;
  const text = new OutputText(ctx.forwarding.output, ctx.forwarding);
  const parts = new PartTexts(text, messageKey);
  const content: unknown[] = [];
  for (const [i, block] of body.content.entries()) {
    const checked = checkBlock(text, parts, i, block);
    if (checked !== undefined) content.push(checked);
    if (text.blocked !== undefined) break;
  }
  parts.finish();
  body.content = content;
  if (text.blocked !== undefined) Object.assign(body, { stop_reason: 'refusal', stop_sequence: null });
}

/** A content block with its texts checked; undefined when a cut leaves nothing of it. */
function checkBlock(text: OutputText, parts: PartTexts, i: number, block: unknown): unknown {
  if (!isRecord(block)) return block;
  if (block.type === 'text' && typeof block.text === 'string') {
    const checked = parts.whole(`${i}:t`, block.text);
    const cited = Array.isArray(block.citations)
      ? block.citations.map((c: unknown) => (isRecord(c) && typeof c.cited_text === 'string' ? { ...c, cited_text: text.whole(c.cited_text) } : c))
      : block.citations;
    // Cut: the text before the match, without the citations of what was dropped.
    if (text.blocked !== undefined) return checked === '' ? undefined : { ...block, text: checked, ...(Array.isArray(cited) && { citations: [] }) };
    return { ...block, text: checked, ...(Array.isArray(cited) && { citations: cited }) };
  }
  if (block.type === 'thinking' && typeof block.thinking === 'string') {
    const checked = parts.whole(`${i}:k`, block.thinking);
    return text.blocked !== undefined && checked === '' ? undefined : { ...block, thinking: checked };
  }
  if (typeof block.type === 'string' && block.type.endsWith('tool_use')) {
    // Keys and values alike: a model reads {"<term>": 1} as it reads the value.
    const input = rewriteStrings(block.input, (s) => text.whole(s), true, true);
    return text.blocked !== undefined ? undefined : input === block.input ? block : { ...block, input };
  }
  return block;
}
