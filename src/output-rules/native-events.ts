// Output rules on a native backend's own events (Responses, Messages): what
// the relay asks of each protocol, and the parts both stream. Every text the
// client reads is a part (a content part, a summary, a text block, a call's
// arguments); parts that read as one share a key of the request's
// OutputText (all of an answer's visible text, all of its reasoning), so a
// term split across two of them is still one term; a call's arguments have
// a key of their own. An event that repeats a part whole carries what the
// rules released of it, never what the backend sent.
import type { ProtocolUsage } from '../protocols/usage';
import type { OutputText, PartKind } from './text';

export type Loose = Record<string, any>;

export interface NativeOutput {
  /** The events to send for `event`: undefined to send it as it came, [] to hold it back whole. */
  filter(event: Loose): Loose[] | undefined;
  /** A rule cut the answer. */
  readonly blocked: boolean;
  /** After the cut, an event of the rest of the backend's stream: the usage it reports, if any (`before`: what was known). */
  usageAfterCut(event: Loose, before: ProtocolUsage | undefined): ProtocolUsage | undefined;
  /** The events that end a cut answer in the protocol, with this usage. */
  cut(usage: ProtocolUsage): Loose[];
}

/** Where a part's text is checked: a key shared with the parts it reads as one with, or its own (the part's id); what kind of text it is. */
export interface PartKey {
  key: string;
  shared: boolean;
  kind: PartKind;
}

/**
 * The parts of one answer under the request's OutputText: what each released
 * so far. `onTail(part, text)`: text a part held goes out now, after its last
 * delta (the protocol sends it as a delta of that part).
 */
export class PartTexts {
  private readonly released = new Map<string, string>();
  /** Parts whose text the rules have read (streamed, or checked whole). */
  private readonly seen = new Set<string>();
  /** Per shared key, the part its held text belongs to. */
  private readonly current = new Map<string, string>();
  private readonly shared = new Set<string>();

  constructor(readonly text: OutputText, private readonly keyOf: (part: string) => PartKey, private readonly onTail: (part: string, text: string) => void = () => undefined) {}

  /** Text of a part as it streams: what may go out now. A shared key moving on from another part releases that part's held text first. */
  feed(part: string, text: string): string {
    const { key, shared, kind } = this.keyOf(part);
    if (shared) this.moveTo(key, part);
    this.seen.add(part);
    const out = this.text.push(key, text, kind);
    this.add(part, out);
    return out;
  }

  /** The part ended: what it still held (sent through onTail when `asDelta`). Its shared key goes on with the next part. */
  close(part: string, asDelta = true): string {
    const { key, shared } = this.keyOf(part);
    if (shared && this.current.get(key) !== part) return '';
    if (shared) this.current.delete(key);
    const tail = shared ? this.text.flush(key) : this.text.end(key);
    this.add(part, tail);
    if (asDelta && tail !== '') this.onTail(part, tail);
    return tail;
  }

  /** A part's whole text, as an event that repeats it should carry: what was released of it, or (never streamed) the text checked now. */
  whole(part: string, text: string): string {
    if (this.seen.has(part)) {
      this.close(part);
      return this.of(part);
    }
    this.feed(part, text);
    this.close(part, false);
    return this.of(part);
  }

  /** The answer ended: every part still holding text releases it (onTail), every key is over. */
  finish(): void {
    for (const key of this.text.holding('')) {
      const part = this.current.get(key) ?? (this.shared.has(key) ? undefined : key);
      const tail = this.text.end(key);
      if (part === undefined || tail === '') continue;
      this.add(part, tail);
      this.onTail(part, tail);
    }
    for (const key of this.shared) this.text.end(key);
    this.current.clear();
  }

  /** What the part released so far. */
  of(part: string): string {
    return this.released.get(part) ?? '';
  }

  has(part: string): boolean {
    return this.seen.has(part);
  }

  private moveTo(key: string, part: string): void {
    this.shared.add(key);
    const at = this.current.get(key);
    if (at === part) return;
    if (at !== undefined) this.close(at);
    this.current.set(key, part);
  }

  private add(part: string, text: string): void {
    if (text !== '') this.released.set(part, this.of(part) + text);
  }
}
