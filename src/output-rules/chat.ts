// Output rules on chat-completions chunks, for every stream that carries
// them (the openai and native formats, and a chat backend's stream on its way
// to a Responses or Messages client): each choice's content, refusal and
// reasoning, and each tool call's arguments, are parts of their own. A
// choice's content reads as one text to its client however its deltas are
// interleaved with tool calls or an early finish reason, so moving to another
// part, or a finish reason, only flushes the part it leaves: what it held
// goes out first, in the same delta, and what could still begin a match stays
// as context for the text that may follow. Every part ends with the stream.
import type { OutputText, PartKind } from './text';

type Delta = Record<string, unknown>;
type ToolCallDelta = { index?: unknown; function?: { arguments?: unknown } & Record<string, unknown> } & Record<string, unknown>;

/** The text fields of a delta, in the order they are read: the field, its part's key, and its kind. */
const TEXT_FIELDS: ReadonlyArray<{ field: string; key: string; kind: PartKind }> = [
  { field: 'reasoning_content', key: 'rc', kind: 'reasoning' }, { field: 'reasoning', key: 'rs', kind: 'reasoning' },
  { field: 'content', key: 'c', kind: 'text' }, { field: 'refusal', key: 'r', kind: 'text' },
];
const SLOT_OF: Readonly<Record<string, number>> = { rc: 0, rs: 1, c: 2, r: 3 };

/** A delta's text in slot `slot` of TEXT_FIELDS (read by name: one delta's fields are read on every chunk). */
function textAt(delta: Delta, slot: number): unknown {
  switch (slot) {
    case 0: return delta.reasoning_content;
    case 1: return delta.reasoning;
    case 2: return delta.content;
    default: return delta.refusal;
  }
}

const hasText = (text: unknown): text is string => typeof text === 'string' && text !== '';

export class ChatOutput {
  /** Per choice, the part it is in ("c", "r", "rc", "rs", or "t<index>" for a tool call), and every part it opened. */
  private readonly current = new Map<number, string>();
  private readonly opened = new Map<number, Set<string>>();
  private readonly names = new Map<number, Map<string, string>>();

  constructor(readonly text: OutputText) {}

  get blocked(): boolean {
    return this.text.blocked !== undefined;
  }

  /**
   * A choice's delta with its texts as they may go out now: held text of a
   * part it leaves first, masks applied; the same object when nothing
   * changed. `finishing`: the chunk carries the choice's finish reason.
   */
  delta(index: number, delta: Delta, finishing: boolean): Delta {
    const calls = Array.isArray(delta.tool_calls) ? (delta.tool_calls as unknown[]) : undefined;
    let out: Parts | undefined;
    for (let slot = 0; slot < TEXT_FIELDS.length; slot++) {
      const text = textAt(delta, slot);
      if (!hasText(text)) continue;
      const { key, kind } = TEXT_FIELDS[slot];
      out ??= new Parts();
      this.moveTo(index, key, out);
      out.add(slot, this.text.push(this.partName(index, key), text, kind));
    }
    if (out === undefined) {
      if (calls === undefined && !finishing) return delta;
      out = new Parts();
    }
    if (calls !== undefined) {
      calls.forEach((raw, position) => {
        if (raw === null || typeof raw !== 'object') return;
        const call = raw as ToolCallDelta;
        const k = typeof call.index === 'number' ? call.index : position;
        this.moveTo(index, `t${k}`, out);
        const args = call.function?.arguments;
        if (typeof args !== 'string' || args === '') return void out.calls.push(call);
        const released = this.text.push(this.partName(index, `t${k}`), args, 'json');
        // A piece of arguments wholly held back goes out later; a call's first delta (its id and name) goes now.
        if (released !== '' || call.id !== undefined || call.function?.name !== undefined) out.calls.push(released === args ? call : { ...call, function: { ...call.function, arguments: released } });
      });
    }
    if (finishing) {
      const at = this.current.get(index);
      if (at !== undefined) out.release(at, this.text.flush(this.partName(index, at)));
    }
    if (out.same(delta, calls)) return delta;
    return out.applyTo(delta);
  }

  /** The end of the stream: every part of every choice ends, and gives what it held, per choice. */
  endAll(): Array<[number, Delta]> {
    const out: Array<[number, Delta]> = [];
    for (const [index, parts] of this.opened) {
      const tails = new Parts();
      for (const part of parts) tails.release(part, this.text.end(this.partName(index, part)));
      if (!tails.empty) out.push([index, tails.applyTo({})]);
    }
    this.opened.clear();
    this.current.clear();
    return out;
  }

  /** The OutputText part of a choice's part ("0:c"), made once: it names a window on every delta. */
  private partName(index: number, part: string): string {
    let names = this.names.get(index);
    if (names === undefined) this.names.set(index, (names = new Map()));
    let name = names.get(part);
    if (name === undefined) names.set(part, (name = `${index}:${part}`));
    return name;
  }

  private moveTo(index: number, part: string, out: Parts): void {
    const at = this.current.get(index);
    if (at === part) return;
    if (at !== undefined) out.release(at, this.text.flush(this.partName(index, at)));
    this.current.set(index, part);
    let parts = this.opened.get(index);
    if (parts === undefined) this.opened.set(index, (parts = new Set()));
    parts.add(part);
  }
}

/** What a delta's texts become: each text field's, and its tool-call pieces in order. */
class Parts {
  /** Each text field's text, by its slot in TEXT_FIELDS (undefined: none). */
  private readonly texts: Array<string | undefined> = [undefined, undefined, undefined, undefined];
  calls: ToolCallDelta[] = [];

  get empty(): boolean {
    return this.calls.length === 0 && this.texts.every((t) => !t);
  }

  add(slot: number, text: string): void {
    this.texts[slot] = (this.texts[slot] ?? '') + text;
  }

  /** What part `part` released, in its field (a tool call's: a piece of its arguments). */
  release(part: string, tail: string): void {
    if (tail === '') return;
    if (part[0] === 't') this.calls.push({ index: Number(part.slice(1)), function: { arguments: tail } });
    else this.add(SLOT_OF[part], tail);
  }

  /** Whether the delta goes out as it came. */
  same(delta: Delta, calls: readonly unknown[] | undefined): boolean {
    for (let slot = 0; slot < 4; slot++) if (this.texts[slot] !== undefined && textAt(delta, slot) !== this.texts[slot]) return false;
    return calls === undefined ? this.calls.length === 0 : calls.length === this.calls.length && calls.every((c, i) => c === this.calls[i]);
  }

  applyTo(delta: Delta): Delta {
    const next: Delta = { ...delta };
    for (let slot = 0; slot < 4; slot++) if (this.texts[slot] !== undefined) next[TEXT_FIELDS[slot].field] = this.texts[slot];
    if (this.calls.length > 0) next.tool_calls = this.calls;
    else delete next.tool_calls;
    return next;
  }
}
