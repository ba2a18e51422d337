// The PII plugin's rules for answers: each detection masked (or the answer
// cut), on the same sliding window as every output rule. Held back while an
// answer streams: the trailing word (an address's local part may go on), a
// trailing run of digits and separators (a number may go on), a trailing
// upper-case run (an IBAN's country code may begin it), and for an operator
// pattern its last maxChars - 1 characters. Text is read as for requests
// (read.ts: accents, blank and invisible characters folded), the hold-back
// too, so a number split by braille blanks waits for its end.
import { originalAt, type OutputMatch, type OutputRules, type OutputScan } from '../../src';
import type { Detector } from './detectors';
import { detectRead, readingsOf } from './read';

// What could still grow into an address, a number or an IBAN at the end of the text.
const TAIL_WORD = /[\p{L}\p{N}._%+@-]+$/u;
const TAIL_NUMBER = /[+(]?\d[\d ().-]*$/;
const TAIL_UPPER = /(?<![\w])[A-Z]{1,2}(?:\d{1,2}(?: ?[A-Z0-9]){0,30} ?)?$/;

export function piiOutputRules(detectors: readonly Detector[], custom: readonly Detector[], action: 'mask' | 'block'): OutputRules {
  const all = [...detectors, ...custom];
  const kinds = new Set(detectors.map((d) => d.kind));
  const customHold = Math.max(0, ...custom.map((d) => d.maxChars));
  return {
    maxHoldChars: Math.max(...all.map((d) => d.maxChars)),
    scan(text: string, from: number): OutputScan {
      const readings = readingsOf(text);
      const matches: OutputMatch[] = detectRead(all, text, from, readings).map((d) => ({
        start: d.start, end: d.end, kind: d.kind, action, ...(action === 'mask' ? { replacement: `[${d.kind.toUpperCase()}]` } : {}),
      }));
      let holdFrom = text.length;
      for (const reading of readings) {
        let held = reading.text.length;
        if (kinds.has('email')) held = tailFrom(TAIL_WORD, reading.text, 254, held);
        if (kinds.has('phone') || kinds.has('card')) held = tailFrom(TAIL_NUMBER, reading.text, 40, held);
        if (kinds.has('iban')) held = tailFrom(TAIL_UPPER, reading.text, 42, held);
        holdFrom = Math.min(holdFrom, originalAt(reading, held, text.length));
      }
      if (customHold > 0) holdFrom = Math.min(holdFrom, text.length - customHold + 1);
      return { matches, holdFrom: Math.max(from, holdFrom) };
    },
  };
}

/** Where a trailing run `re` finds (at most `max` long) begins, if before `held`; else `held`. */
function tailFrom(re: RegExp, text: string, max: number, held: number): number {
  const m = re.exec(text);
  return m !== null && m[0].length <= max ? Math.min(held, m.index) : held;
}
