// Redaction of a request's texts: each value found becomes a placeholder
// naming its kind and its order of appearance, the same for the same value
// everywhere in the request ([EMAIL_1] stays [EMAIL_1] in every message), so
// the model can still tell two people or two cards apart. A text is read as
// a reader sees it: JSON escapes decoded (bob\u0040example.com is an
// address), then folded (read.ts); what is found there is replaced in the
// text as written, a whole escape or character at a time, so JSON stays JSON.
import { decodeJsonEscapes } from '../../src';
import type { Detection, Detector } from './detectors';
import { detectRead, placed } from './read';

/** Whether a text may hold personal data at all: an address has an @, the rest digits (operator patterns aside). */
const MAY_HOLD = /[@\d]/;
const ASCII = /^[\x00-\x7f]*$/;
// Past ASCII, full-width and other compatibility forms of them count (the fold reads them as @ and digits);
// folding text that has none costs more than all the detectors, and a number spelt wholly in letters that
// merely look like digits (Cyrillic З for 3) is not worth it.
const mayHold = (text: string): boolean => MAY_HOLD.test(text) || (!ASCII.test(text) && MAY_HOLD.test(text.normalize('NFKC')));

export class Placeholders {
  private readonly given = new Map<string, string>();
  private readonly counts = new Map<string, number>();

  of(d: Detection): string {
    const key = `${d.kind}\u0000${d.value}`;
    let placeholder = this.given.get(key);
    if (placeholder === undefined) {
      const n = (this.counts.get(d.kind) ?? 0) + 1;
      this.counts.set(d.kind, n);
      placeholder = `[${d.kind.toUpperCase()}_${n}]`;
      this.given.set(key, placeholder);
    }
    return placeholder;
  }
}

/** The detections in a text as read, at their places in the text as written (none looked for in a text that cannot hold any, unless operator patterns ask). */
export function detectIn(detectors: readonly Detector[], anyText: boolean, text: string): Detection[] {
  const decoded = decodeJsonEscapes(text);
  if (!anyText && !mayHold(decoded.text)) return [];
  const found = detectRead(detectors, decoded.text);
  return decoded.starts === undefined ? found : found.map((d) => placed(d, decoded));
}

/** `text` with each detection replaced by its placeholder. */
export function redact(text: string, found: readonly Detection[], placeholders: Placeholders): string {
  let out = '';
  let at = 0;
  for (const d of found) {
    out += text.slice(at, d.start) + placeholders.of(d);
    at = d.end;
  }
  return out + text.slice(at);
}
