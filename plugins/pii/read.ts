// Personal data in text as a reader sees it: past plain ASCII, the text is
// also read folded (src/text/fold.ts: accents off, invisible and blank
// characters removed or read as spaces, full-width digits as digits), so
// "+1 415\u2800555\u28002671" is a phone number; each detection is placed
// back on the text as written, whole characters at a time.
import { compose, foldedAt, foldMapped, foldReadings, sourceOf, type MappedReading } from '../../src';
import { detect, nonOverlapping, type Detection, type Detector } from './detectors';

/** Printable ASCII and whitespace: the fold leaves it as it is (bar whitespace runs), so it is read as written only. */
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;

/** The readings of `text`: as written (an operator's pattern may name accented letters), and folded when that changes it. */
export function readingsOf(text: string): MappedReading[] {
  return PLAIN_ASCII.test(text) ? [{ text }] : [{ text }, ...foldMapped(text).folded];
}

/** Every detection in any reading of `text` that starts at or after `from`, placed in `text`, in order, none overlapping. */
export function detectRead(detectors: readonly Detector[], text: string, from = 0, readings?: MappedReading[]): Detection[] {
  if (readings === undefined) {
    if (PLAIN_ASCII.test(text)) return detect(detectors, text, from);
    // Most text holds nothing the fold reveals: its folded readings, unmapped (a third of the cost), tell.
    const asWritten = detect(detectors, text, from);
    if (foldReadings(compose(text)).every((t) => sameValues(detect(detectors, t, from), asWritten))) return asWritten;
    readings = readingsOf(text);
  }
  if (readings.length === 1) return detect(detectors, text, from);
  const found: Detection[] = [];
  for (const reading of readings) for (const d of detect(detectors, reading.text, foldedAt(reading, from))) found.push(placed(d, reading));
  return nonOverlapping(found);
}

/** A detection in `reading` as one in the text it was read from. */
export const placed = (d: Detection, reading: MappedReading): Detection => {
  if (reading.starts === undefined) return d;
  const [start, end] = sourceOf(reading, d.start, d.end);
  return { ...d, start, end };
};

const sameValues = (a: readonly Detection[], b: readonly Detection[]): boolean =>
  a.length === b.length && a.every((d, i) => d.kind === b[i].kind && d.value === b[i].value);
