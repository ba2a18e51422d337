// Redaction of a request's texts: each value found becomes a placeholder
// naming its kind and its order of appearance, the same for the same value
// everywhere in the request ([EMAIL_1] stays [EMAIL_1] in every message), so
// the model can still tell two people or two cards apart. A text is read as
// a reader sees it: JSON escapes decoded (bob\u0040example.com is an
// address), then, past plain ASCII, folded (src/text/fold.ts: accents,
// invisible and blank characters, full-width digits); what is found there is
// replaced in the text as written, a whole escape or character at a time, so
// JSON stays JSON.
import { decodeJsonEscapes, foldMapped, sourceOf, type MappedReading } from '../../src';
import { detect, nonOverlapping, type Detection, type Detector } from './detectors';

/** Whether a text may hold personal data at all: an address has an @, the rest digits (operator patterns aside); other text is folded first. */
const MAY_HOLD = /[@\d\\]|[^\x00-\x7f]/;
/** Printable ASCII and whitespace: the fold leaves it as it is (bar whitespace runs), so it is read as written. */
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;

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
  if (!anyText && !MAY_HOLD.test(text)) return [];
  const decoded = decodeJsonEscapes(text);
  const found = PLAIN_ASCII.test(decoded.text) ? detect(detectors, decoded.text) : detectFolded(detectors, decoded.text);
  return decoded.starts === undefined ? found : found.map((d) => placed(d, decoded));
}

/** Detections in `text` as written (an operator's pattern may name accented letters) and in each folded reading, placed in `text`. */
function detectFolded(detectors: readonly Detector[], text: string): Detection[] {
  const found = detect(detectors, text);
  for (const reading of foldMapped(text).folded) for (const d of detect(detectors, reading.text)) found.push(placed(d, reading));
  return nonOverlapping(found);
}

const placed = (d: Detection, reading: MappedReading): Detection => {
  const [start, end] = sourceOf(reading, d.start, d.end);
  return { ...d, start, end };
};

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
