// Output rules on a native backend's own events (Responses, Messages): what
// the relay asks of each protocol. Text and argument deltas pass through the
// request's OutputText part by part; a part's end event is preceded by a
// delta carrying what it still held; after a cut, the protocol's own ending.
import type { ProtocolUsage } from '../../protocols/usage';

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

/** A part's texts as released so far, for events that repeat a part whole (masks applied) and for the cut's final answer. */
export class ReleasedTexts {
  private readonly texts = new Map<string, string>();

  add(part: string, text: string): void {
    if (text !== '') this.texts.set(part, (this.texts.get(part) ?? '') + text);
  }

  of(part: string): string {
    return this.texts.get(part) ?? '';
  }
}
