// Output rules on a Messages backend's own stream: every text the client
// reads passes them: text blocks (text already in content_block_start, then
// text_delta), thinking (thinking_delta), a tool call's input (in
// content_block_start, keys and values; then input_json_delta), and each
// citations_delta's cited_text. All text blocks read as one text, all
// thinking as another; a tool call's input is its own. content_block_stop
// is preceded by a delta carrying what the block still held. Messages
// repeats no text whole. A cut stops the open block and ends with
// message_delta (stop_reason refusal, the usage) and message_stop.
import type { ProtocolUsage } from '../protocols/usage';
import { rewriteStrings } from '../request/rewrite-strings';
import { PartTexts, type Loose, type NativeOutput, type PartKey } from './native-events';
import type { OutputText } from './text';

/** A block's part is "<index>:<k>": t a text block, k thinking, i a tool call's input. Per k: its delta type and the field of its text. */
const DELTAS: Readonly<Record<string, [string, string]>> = { t: ['text_delta', 'text'], k: ['thinking_delta', 'thinking'], i: ['input_json_delta', 'partial_json'] };
const K_OF_DELTA: Readonly<Record<string, string>> = { text_delta: 't', thinking_delta: 'k', input_json_delta: 'i' };
const K_OF_BLOCK: Readonly<Record<string, string>> = { text: 't', thinking: 'k' };

const keyOf = (part: string): PartKey => {
  const k = part.at(-1);
  if (k === 't') return { key: 'text', shared: true, kind: 'text' };
  if (k === 'k') return { key: 'thinking', shared: true, kind: 'reasoning' };
  return { key: part, shared: false, kind: 'json' };
};

const isToolUse = (block: Loose): boolean => typeof block?.type === 'string' && block.type.endsWith('tool_use');

type Fate = 'same' | 'changed' | 'drop';

export class MessagesOutput implements NativeOutput {
  /** Open blocks by index, with their part (undefined: a block without text). */
  private readonly open = new Map<number, string | undefined>();
  private readonly parts: PartTexts;
  /** Deltas carrying held text, to go out before the event at hand. */
  private pending: Loose[] = [];

  constructor(private readonly text: OutputText) {
    this.parts = new PartTexts(text, keyOf, (part, tail) => {
      const [type, field] = DELTAS[part.at(-1)!];
      this.pending.push({ type: 'content_block_delta', index: Number(part.slice(0, -2)), delta: { type, [field]: tail } });
    });
  }

  get blocked(): boolean {
    return this.text.blocked !== undefined;
  }

  filter(event: Loose): Loose[] | undefined {
    const fate = this.apply(event);
    const added = this.pending;
    this.pending = [];
    // After a cut, a delta keeps what came before the match and a block's start what it opens (the cut stops it).
    const keep = fate !== 'drop' && (this.text.blocked === undefined || event.type === 'content_block_delta' || event.type === 'content_block_start');
    if (fate === 'same' && keep && added.length === 0) return undefined;
    return keep ? [...added, event] : added;
  }

  private apply(event: Loose): Fate {
    switch (event.type) {
      case 'content_block_start': return this.start(event);
      case 'content_block_delta': return this.delta(event);
      case 'content_block_stop': {
        const part = this.open.get(event.index);
        this.open.delete(event.index);
        if (part !== undefined) this.parts.close(part);
        return 'same';
      }
      case 'message_delta': case 'message_stop':
        // Blocks the backend never stopped: what they hold goes out before the message ends.
        this.parts.finish();
        return 'same';
      default: return 'same';
    }
  }

  private start(event: Loose): Fate {
    const block = event.content_block;
    const k = K_OF_BLOCK[block?.type] ?? (isToolUse(block) ? 'i' : undefined);
    const part = k === undefined ? undefined : `${event.index}:${k}`;
    this.open.set(event.index, part);
    if (k === 'i' && block.input !== null && typeof block.input === 'object') {
      // Keys and values alike: a model reads {"<term>": 1} as it reads the value.
      const input = rewriteStrings(block.input, (s) => this.text.whole(s), true, true);
      if (this.text.blocked !== undefined) {
        this.open.delete(event.index);
        return 'drop';
      }
      return this.replace(event, { ...block, input }, input !== block.input);
    }
    const field = k === undefined || k === 'i' ? undefined : DELTAS[k][1];
    const t = field === undefined ? undefined : block[field];
    if (typeof t !== 'string' || t === '') return 'same';
    const out = this.parts.feed(part!, t);
    return this.replace(event, { ...block, [field!]: out }, out !== t);
  }

  private delta(event: Loose): Fate {
    const delta = event.delta;
    if (delta?.type === 'citations_delta') {
      const cited = delta.citation?.cited_text;
      if (typeof cited !== 'string') return 'same';
      const out = this.text.whole(cited);
      if (this.text.blocked !== undefined) return 'drop';
      if (out === cited) return 'same';
      event.delta = { ...delta, citation: { ...delta.citation, cited_text: out } };
      return 'changed';
    }
    const k = K_OF_DELTA[delta?.type];
    const field = k === undefined ? undefined : DELTAS[k][1];
    if (field === undefined || typeof delta[field] !== 'string') return 'same';
    const out = this.parts.feed(`${event.index}:${k}`, delta[field]);
    if (out === delta[field]) return 'same';
    if (out === '') return 'drop';
    delta[field] = out;
    return 'changed';
  }

  private replace(event: Loose, block: Loose, changed: boolean): Fate {
    if (!changed) return 'same';
    event.content_block = block;
    return 'changed';
  }

  usageAfterCut(event: Loose, before: ProtocolUsage | undefined): ProtocolUsage | undefined {
    const output = event.type === 'message_delta' ? event.usage?.output_tokens : undefined;
    return Number.isSafeInteger(output) && before !== undefined ? { ...before, output_tokens: output } : undefined;
  }

  cut(usage: ProtocolUsage): Loose[] {
    const events: Loose[] = [...this.open.keys()].map((index) => ({ type: 'content_block_stop', index }));
    this.open.clear();
    events.push({ type: 'message_delta', delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
    events.push({ type: 'message_stop' });
    return events;
  }
}
