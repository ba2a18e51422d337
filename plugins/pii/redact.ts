// Redaction of a request's texts: each value found becomes a placeholder
// naming its kind and its order of appearance, the same for the same value
// everywhere in the request ([EMAIL_1] stays [EMAIL_1] in every message), so
// the model can still tell two people or two cards apart.
import { detect, type Detection, type Detector } from './detectors';

/** Whether a text may hold personal data at all: an address has an @, the rest digits (operator patterns aside). */
const MAY_HOLD = /[@\d]/;

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

/** The detections in a text (none looked for in a text that cannot hold any, unless operator patterns ask). */
export function detectIn(detectors: readonly Detector[], anyText: boolean, text: string): Detection[] {
  return anyText || MAY_HOLD.test(text) ? detect(detectors, text) : [];
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
