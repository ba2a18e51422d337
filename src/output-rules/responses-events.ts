// Output rules on a Responses backend's own stream: every text the client
// reads passes them (output text, refusals, reasoning text and summaries,
// function arguments, custom tool input; responses-parts.ts names them),
// wherever it comes (a delta, text already in an .added event, or only in
// an event that repeats it whole). Events that repeat a part whole (its
// .done, its part's .done, the item's .done, the terminal response) carry
// what the rules released of it; held text goes out in a delta of its own
// before the event that ends its part. Events held whole or added shift
// the sequence_numbers that follow. A cut closes the open items as
// incomplete and ends with response.incomplete, reason content_filter.
import { responsesUsageOf } from '../protocols/responses/native';
import type { ProtocolUsage } from '../protocols/usage';
import { PartTexts, type Loose, type NativeOutput } from './native-events';
import { cutItem, deltaOf, doneEventsOf, fieldOf, mapItemTexts, partKey, partOfEvent, partOfPart, TEXT_EVENTS } from './responses-parts';
import type { OutputText } from './text';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const ADDED = new Set(['response.output_item.added', 'response.content_part.added', 'response.reasoning_summary_part.added']);

/** What a rewrite did to the event: nothing, changed it (send it re-written), or left nothing of it to send. */
type Fate = 'same' | 'changed' | 'drop';

export class ResponsesOutput implements NativeOutput {
  /** Events added minus events held whole so far: what the backend's sequence numbers are shifted by. */
  private shift = 0;
  private lastSequence = -1;
  private base: Loose = {};
  /** Output items by output_index, as last seen; the open ones with the parts they streamed, in order, and those not yet done. */
  private readonly items = new Map<number, Loose>();
  private readonly open = new Map<number, { parts: string[]; live: Set<string> }>();
  private readonly parts: PartTexts;
  /** Deltas carrying held text, to go out before the event at hand. */
  private pending: Loose[] = [];

  constructor(private readonly text: OutputText) {
    this.parts = new PartTexts(text, partKey, (part, tail) => void this.pending.push(deltaOf(part, tail, this.items.get(Number(part.split(':')[0]))?.id)));
  }

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
    const fate = this.apply(event);
    const added = this.pending;
    this.pending = [];
    // After a cut, a delta keeps what came before the match and an .added event what it opens (the cut closes it); events that end something are the cut's to send.
    const keep = fate !== 'drop' && (this.text.blocked === undefined || ADDED.has(event.type) || TEXT_EVENTS.get(event.type)?.[1] === false);
    if (fate === 'same' && keep && added.length === 0) return undefined;
    return keep ? [...added, event] : added;
  }

  private apply(event: Loose): Fate {
    const text = TEXT_EVENTS.get(event.type);
    if (text !== undefined) return text[1] ? this.partDone(event, text[0]) : this.delta(event, text[0]);
    switch (event.type) {
      case 'response.created': case 'response.in_progress':
        if (event.response !== null && typeof event.response === 'object') this.base = event.response;
        return 'same';
      case 'response.output_item.added': {
        this.open.set(event.output_index, { parts: [], live: new Set() });
        const item = mapItemTexts(event.output_index, event.item, (part, t) => (t === '' ? t : this.feed(part, t)));
        this.items.set(event.output_index, item);
        return this.replace(event, 'item', item);
      }
      case 'response.content_part.added': case 'response.reasoning_summary_part.added': {
        const at = partOfPart(event);
        if (at === undefined) return 'same';
        this.touch(at.part);
        const t = event.part[at.field];
        if (typeof t !== 'string' || t === '') return 'same';
        return this.replacePart(event, at.field, this.feed(at.part, t));
      }
      case 'response.content_part.done': case 'response.reasoning_summary_part.done': {
        const at = partOfPart(event);
        if (at === undefined || typeof event.part[at.field] !== 'string') return 'same';
        const released = this.whole(at.part, event.part[at.field]);
        this.open.get(event.output_index)?.live.delete(at.part);
        return this.replacePart(event, at.field, released);
      }
      case 'response.output_item.done': {
        const index = event.output_index;
        this.closeItem(index);
        const item = mapItemTexts(index, event.item, (part, t) => this.whole(part, t));
        if (this.text.blocked !== undefined) return 'drop';
        this.open.delete(index);
        this.items.set(index, item);
        return this.replace(event, 'item', item);
      }
      default:
        return TERMINAL.has(event.type) ? this.terminal(event) : 'same';
    }
  }

  private delta(event: Loose, kind: string): Fate {
    if (typeof event.delta !== 'string') return 'same';
    const out = this.feed(partOfEvent(event, kind), event.delta);
    if (out === event.delta) return 'same';
    if (out === '') return 'drop';
    event.delta = out;
    return 'changed';
  }

  /** A part's .done: what it held goes out first, in a delta; its whole text is the released one. */
  private partDone(event: Loose, kind: string): Fate {
    const part = partOfEvent(event, kind);
    const name = fieldOf(kind);
    if ('ai'.includes(kind)) this.open.get(event.output_index)?.live.delete(part);
    if (typeof event[name] !== 'string') return void this.parts.close(part), 'same';
    return this.replace(event, name, this.whole(part, event[name]));
  }

  /** The terminal response: its items' texts as released (or checked now), every part's held text out before it. */
  private terminal(event: Loose): Fate {
    const output = event.response?.output;
    let changed = false;
    if (Array.isArray(output)) {
      const next: Loose[] = [];
      for (const [i, item] of output.entries()) {
        this.closeItem(i);
        const checked = mapItemTexts(i, item, (part, t) => this.whole(part, t));
        const cut = this.text.blocked !== undefined;
        // An item only this event carries: the cut's final response has it as far as it was read.
        if (!this.open.has(i)) this.items.set(i, cut ? { ...checked, status: 'incomplete' } : checked);
        if (cut) return 'drop';
        changed ||= checked !== item;
        next.push(checked);
      }
      if (changed) event.response = { ...event.response, output: next };
    }
    this.parts.finish();
    return changed ? 'changed' : 'same';
  }

  private feed(part: string, text: string): string {
    this.touch(part);
    return this.parts.feed(part, text);
  }

  private whole(part: string, text: string): string {
    this.touch(part);
    return this.parts.whole(part, text);
  }

  /** An item ends: what its parts still hold goes out, in order. */
  private closeItem(index: number): void {
    for (const part of this.open.get(index)?.parts ?? []) this.parts.close(part);
  }

  private touch(part: string): void {
    const item = this.open.get(Number(part.split(':')[0]));
    if (item === undefined || item.parts.includes(part)) return;
    item.parts.push(part);
    item.live.add(part);
  }

  private replace(event: Loose, field: string, value: unknown): Fate {
    if (value === event[field]) return 'same';
    event[field] = value;
    return 'changed';
  }

  private replacePart(event: Loose, field: string, text: string): Fate {
    return text === event.part[field] ? 'same' : this.replace(event, 'part', { ...event.part, [field]: text });
  }

  usageAfterCut(event: Loose): ProtocolUsage | undefined {
    return TERMINAL.has(event.type) ? responsesUsageOf(event.response?.usage) : undefined;
  }

  cut(usage: ProtocolUsage): Loose[] {
    const events: Loose[] = [];
    const emit = ({ type, ...fields }: Loose): void => void events.push({ type, sequence_number: ++this.lastSequence, ...fields });
    const of = (part: string): string => this.parts.of(part);
    for (const [index, { parts, live }] of [...this.open].sort((a, b) => a[0] - b[0])) {
      const item = this.items.get(index) ?? {};
      for (const part of parts) if (live.has(part)) doneEventsOf(part, of(part), item.id).forEach(emit);
      const done = { ...cutItem(item, parts, of), status: 'incomplete' };
      this.items.set(index, done);
      emit({ type: 'response.output_item.done', output_index: index, item: done });
    }
    this.open.clear();
    const output = [...this.items].sort((a, b) => a[0] - b[0]).map(([, item]) => item);
    const total = usage.input_tokens + usage.output_tokens;
    const body = {
      input_tokens: usage.input_tokens, input_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0 },
      output_tokens: usage.output_tokens, output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 }, total_tokens: total,
    };
    emit({ type: 'response.incomplete', response: { ...this.base, status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output, usage: body } });
    return events;
  }
}
