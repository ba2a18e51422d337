// Personal data in text: e-mail addresses, phone numbers, payment card
// numbers (issuer prefix and Luhn), IBANs (country length and mod 97), and
// the operator's own patterns. Each detector is shaped to pass over what only
// looks like one: dates, times, version strings, IP addresses, UUIDs, order
// and invoice numbers, amounts with thousands separators (see the corpus in
// test/plugins/pii.test.ts for what it finds and misses).
import { cardValid, ibanValid, IBAN_LENGTHS } from './checksums';

export interface Detection {
  start: number;
  end: number;
  kind: string;
  /** The value in one form (separators dropped, lower case): the same value gets the same placeholder. */
  value: string;
}

export interface Detector {
  readonly kind: string;
  /** The longest a match can be, in characters (what a streaming answer may hold back for it). */
  readonly maxChars: number;
  find(text: string, from: number, out: Detection[]): void;
}

const each = (regex: RegExp, text: string, from: number, take: (m: RegExpExecArray) => void): void => {
  regex.lastIndex = from;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) take(m);
};

// Letters of any script in the local part and the domain (internationalised addresses); not part of a longer token.
const EMAIL = /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}][\p{L}\p{N}._%+-]{0,63}@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+\p{L}{2,24}(?![\p{L}\p{N}_-]|\.[\p{L}\p{N}_-])/gu;

export const email: Detector = {
  kind: 'email',
  maxChars: 254,
  find(text, from, out) {
    each(EMAIL, text, from, (m) => out.push({ start: m.index, end: m.index + m[0].length, kind: 'email', value: m[0].toLowerCase() }));
  },
};

// Groups of 2 to 4 digits with one separator between (space, dot, dash), an
// optional country code and area code in parentheses; or + and the digits
// unbroken. Not inside a longer token (a letter, #, /, a dash or dot before),
// and not after a digit and a separator (an amount with thousands spaces).
const PHONE = /(?<![\w+#./@-])(?<!\d[ .,-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}(?![\w@]|[.,/-]\d)|(?<![\w+#./@-])\+\d{8,15}(?![\w@]|[.,/-]\d)/g;
const NOT_DIGIT = /\D/g;
// A number grouped by thousands (1 234 567, 12.345.678, an IP's 192.168.100.200) is not a phone number.
const THOUSANDS = /^\d{1,3}(?:[ .]\d{3})+$/;
// Nor is a date written with its own separators, or a list of years.
const DATE = /^(?:\d{4}[.-]\d{2}[.-]\d{2}|\d{2}[.-]\d{2}[.-]\d{4})(?:$|[ ])/;
const YEARS = /^(?:(?:19|20)\d\d )+(?:19|20)\d\d$/;

export const phone: Detector = {
  kind: 'phone',
  maxChars: 24,
  find(text, from, out) {
    each(PHONE, text, from, (m) => {
      const digits = m[0].replace(NOT_DIGIT, '');
      const marked = m[0].startsWith('+') || m[0].includes('(');
      if (digits.length < (marked ? 8 : 10) || digits.length > 15) return;
      if (!marked && (THOUSANDS.test(m[0]) || DATE.test(m[0]) || YEARS.test(m[0]))) return;
      out.push({ start: m.index, end: m.index + m[0].length, kind: 'phone', value: `${m[0].startsWith('+') ? '+' : ''}${digits}` });
    });
  },
};

// 13 to 19 digits, in groups or not, with one space or dash between groups.
const CARD = /(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w]|[.-]\d)/g;

export const card: Detector = {
  kind: 'card',
  maxChars: 23,
  find(text, from, out) {
    each(CARD, text, from, (m) => {
      const digits = m[0].replace(NOT_DIGIT, '');
      if (cardValid(digits)) out.push({ start: m.index, end: m.index + m[0].length, kind: 'card', value: digits });
    });
  },
};

// A country code and two check digits, then as many letters and digits as
// that country's IBAN has, in groups of four (a space between) or unbroken.
const IBAN_START = /(?<![\w])([A-Z]{2})\d{2}/g;
const ALNUM = /[A-Z0-9]/;

export const iban: Detector = {
  kind: 'iban',
  maxChars: 42,
  find(text, from, out) {
    each(IBAN_START, text, from, (m) => {
      const length = IBAN_LENGTHS[m[1]];
      if (length === undefined) return;
      let value = m[0];
      let i = m.index + 4;
      while (value.length < length && i < text.length) {
        if (text[i] === ' ' && ALNUM.test(text[i + 1] ?? '')) i++;
        if (!ALNUM.test(text[i] ?? '')) break;
        value += text[i++];
      }
      if (value.length !== length || /\w/.test(text[i] ?? '') || !ibanValid(value)) return;
      out.push({ start: m.index, end: i, kind: 'iban', value });
      IBAN_START.lastIndex = i;
    });
  },
};

/** An operator's pattern, named: its name is the kind (in placeholders and counts). */
export function patternDetector(name: string, pattern: string, maxChars: number): Detector {
  const regex = new RegExp(pattern, 'gu');
  return {
    kind: name,
    maxChars,
    find(text, from, out) {
      each(regex, text, from, (m) => {
        if (m[0] === '') regex.lastIndex++;
        else out.push({ start: m.index, end: m.index + m[0].length, kind: name, value: m[0] });
      });
    },
  };
}

export const BUILT_IN: Readonly<Record<string, Detector>> = { email, phone, card, iban };

/** Every detection in `text` from `from`, in order, none overlapping an earlier one (at one start, the longest; a checked number before a phone). */
export function detect(detectors: readonly Detector[], text: string, from = 0): Detection[] {
  const found: Detection[] = [];
  for (const d of detectors) d.find(text, from, found);
  return nonOverlapping(found);
}

/** `found` in order, none overlapping an earlier one (see detect). */
export function nonOverlapping(found: Detection[]): Detection[] {
  if (found.length < 2) return found;
  found.sort((a, b) => a.start - b.start || b.end - a.end || rank(a) - rank(b));
  const out: Detection[] = [];
  let end = -1;
  for (const d of found) {
    if (d.start < end) continue;
    out.push(d);
    end = d.end;
  }
  return out;
}

const RANKS: Readonly<Record<string, number>> = { card: 0, iban: 1, email: 2, phone: 3 };
const rank = (d: Detection): number => RANKS[d.kind] ?? 4;
