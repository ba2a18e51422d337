// Output rules on a Responses backend's own stream: output_text and
// function_call_arguments deltas are the parts (by output_index and
// content_index). Events that repeat a part whole (its .done, the item's
// .done, the terminal response) carry the released text once a mask changed
// any; events held whole or added shift the sequence_numbers that follow.
// A cut closes the open items as incomplete and ends with
// response.incomplete, reason content_filter.
import { responsesUsageOf } from '../../protocols/responses/native';
import type { ProtocolUsage } from '../../protocols/usage';
import { ReleasedTexts, type Loose, type NativeOutput } from './native-events';
import type { OutputText } from './text';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

const partOf = (e: Loose): string => (e.type.startsWith('response.function_call_arguments') ? `${e.output_index}:a` : `${e.output_index}:${e.content_index ?? 0}`);

export class ResponsesOutput implements NativeOutput {
  /** Events added minus events held whole so far: what the backend's sequence numbers are shifted by. */
  private shift = 0;
  private lastSequence = -1;
  private base: Loose = {};
  /** Output items by output_index, as last seen; and which are still open, with their message parts. */
  private readonly items = new Map<number, Loose>();
  private readonly open = new Map<number, Set<number>>();
  private readonly released = new ReleasedTexts();

  constructor(private readonly text: OutputText) {}

  get blocked(): boolean {
    return this.text.blocked !== undefined;
  }

  filter(event: Loose): Loose[] | undefined {
    const out = this.rewrite(event);
    const n = event.sequence_number;
    if (typeof n !== 'number') return out;
    if (out === undefined && this.shift === 0) {
      this.lastSequence = n;
      return undefined;
    }
    const list = out ?? [event];
    list.forEach((e, i) => { e.sequence_number = n + this.shift + i; });
    this.shift += list.length - 1;
    if (list.length > 0) this.lastSequence = list.at(-1)!.sequence_number;
    return list;
  }

  private rewrite(event: Loose): Loose[] | undefined {
    switch (event.type) {
      case 'response.created': case 'response.in_progress':
        if (event.response !== null && typeof event.response === 'object') this.base = event.response;
        return undefined;
      case 'response.output_item.added':
        this.items.set(event.output_index, event.item);
        this.open.set(event.output_index, new Set());
        return undefined;
      case 'response.content_part.added':
        this.open.get(event.output_index)?.add(event.content_index ?? 0);
        return undefined;
      case 'response.output_text.delta': case 'response.function_call_arguments.delta': return this.delta(event);
      case 'response.output_text.done': case 'response.function_call_arguments.done': return this.partDone(event);
      case 'response.content_part.done':
        if (this.text.masked && event.part?.type === 'output_text') event.part.text = this.released.of(partOf(event));
        return this.text.masked ? [event] : undefined;
      case 'response.output_item.done': {
        const tails = this.tails(`${event.output_index}:`);
        this.open.delete(event.output_index);
        if (this.text.masked) event.item = this.withReleased(event.output_index, event.item);
        this.items.set(event.output_index, event.item);
        return this.text.masked || tails.length > 0 ? [...tails, event] : undefined;
      }
      default: {
        if (!TERMINAL.has(event.type)) return undefined;
        const tails = this.tails('');
        if (this.text.masked && Array.isArray(event.response?.output)) event.response.output = event.response.output.map((item: Loose, i: number) => this.withReleased(i, item));
        return this.text.masked || tails.length > 0 ? [...tails, event] : undefined;
      }
    }
  }

  private delta(event: Loose): Loose[] | undefined {
    if (typeof event.delta !== 'string') return undefined;
    const part = partOf(event);
    const text = this.text.push(part, event.delta);
    this.released.add(part, text);
    if (text === event.delta) return undefined;
    if (text === '') return [];
    event.delta = text;
    return [event];
  }

  /** A part's end: what it held goes out first, in a delta of its own; its whole text is the released one. */
  private partDone(event: Loose): Loose[] | undefined {
    const part = partOf(event);
    const tail = this.text.end(part);
    this.released.add(part, tail);
    if (this.text.masked) event[event.type === 'response.output_text.done' ? 'text' : 'arguments'] = this.released.of(part);
    if (tail === '') return this.text.masked ? [event] : undefined;
    return [this.deltaOf(part, tail), event];
  }

  /** Deltas for what parts under `prefix` still hold, had the backend skipped their .done events. */
  private tails(prefix: string): Loose[] {
    return this.text.holding(prefix).map((part) => {
      const tail = this.text.end(part);
      this.released.add(part, tail);
      return this.deltaOf(part, tail);
    });
  }

  /** A delta event carrying `tail` for a part ("<output_index>:<content_index>", or "<output_index>:a" for arguments). */
  private deltaOf(part: string, tail: string): Loose {
    const [index, content] = part.split(':');
    const at = { item_id: this.items.get(Number(index))?.id, output_index: Number(index) };
    return content === 'a'
      ? { type: 'response.function_call_arguments.delta', ...at, delta: tail }
      : { type: 'response.output_text.delta', ...at, content_index: Number(content), delta: tail, logprobs: [] };
  }

  /** An output item with its parts' released texts. */
  private withReleased(index: number, item: Loose): Loose {
    if (item?.type === 'function_call') return { ...item, arguments: this.released.of(`${index}:a`) };
    if (item?.type !== 'message' || !Array.isArray(item.content)) return item;
    return { ...item, content: item.content.map((p: Loose, ci: number) => (p?.type === 'output_text' ? { ...p, text: this.released.of(`${index}:${ci}`) } : p)) };
  }

  usageAfterCut(event: Loose): ProtocolUsage | undefined {
    return TERMINAL.has(event.type) ? responsesUsageOf(event.response?.usage) : undefined;
  }

  cut(usage: ProtocolUsage): Loose[] {
    const events: Loose[] = [];
    const emit = (type: string, fields: Loose): void => void events.push({ type, sequence_number: ++this.lastSequence, ...fields });
    for (const [index, parts] of [...this.open].sort((a, b) => a[0] - b[0])) {
      const item = this.items.get(index) ?? {};
      const at = { item_id: item.id, output_index: index };
      if (item.type === 'message') {
        for (const ci of parts) {
          const text = this.released.of(`${index}:${ci}`);
          emit('response.output_text.done', { ...at, content_index: ci, text, logprobs: [] });
          emit('response.content_part.done', { ...at, content_index: ci, part: { type: 'output_text', text, annotations: [] } });
        }
        item.content = [...parts].map((ci) => ({ type: 'output_text', text: this.released.of(`${index}:${ci}`), annotations: [] }));
      } else if (item.type === 'function_call') {
        emit('response.function_call_arguments.done', { ...at, arguments: this.released.of(`${index}:a`) });
        item.arguments = this.released.of(`${index}:a`);
      }
      const done = { ...item, status: 'incomplete' };
      this.items.set(index, done);
      emit('response.output_item.done', { output_index: index, item: done });
    }
    this.open.clear();
    const output = [...this.items].sort((a, b) => a[0] - b[0]).map(([, item]) => item);
    const total = usage.input_tokens + usage.output_tokens;
    const body = {
      input_tokens: usage.input_tokens, input_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0 },
      output_tokens: usage.output_tokens, output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 }, total_tokens: total,
    };
    emit('response.incomplete', { response: { ...this.base, status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output, usage: body } });
    return events;
  }
}
