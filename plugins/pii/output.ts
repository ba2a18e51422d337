// The PII plugin's rules for answers: each detection masked (or the answer
// cut), on the same sliding window as every output rule. Held back while an
// answer streams: the trailing word (an address's local part may go on), a
// trailing run of digits and separators (a number may go on), a trailing
// upper-case run (an IBAN's country code may begin it), and for an operator
// pattern its last maxChars - 1 characters.
import type { OutputMatch, OutputRules, OutputScan } from '../../src';
import { detect, type Detector } from './detectors';

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
      const matches: OutputMatch[] = detect(all, text, from).map((d) => ({
        start: d.start, end: d.end, kind: d.kind, action, ...(action === 'mask' ? { replacement: `[${d.kind.toUpperCase()}]` } : {}),
      }));
      let holdFrom = text.length;
      const hold = (re: RegExp, max: number): void => {
        const m = re.exec(text);
        if (m !== null && m[0].length <= max) holdFrom = Math.min(holdFrom, m.index);
      };
      if (kinds.has('email')) hold(TAIL_WORD, 254);
      if (kinds.has('phone') || kinds.has('card')) hold(TAIL_NUMBER, 40);
      if (kinds.has('iban')) hold(TAIL_UPPER, 42);
      if (customHold > 0) holdFrom = Math.min(holdFrom, text.length - customHold + 1);
      return { matches, holdFrom: Math.max(from, holdFrom) };
    },
  };
}
