// The content filter's rules for answers (settings `output`): terms and
// patterns matched on the answer's text folded as a reader sees it, the
// same folding as requests, with each match mapped back to the text as
// written. What is held back while an answer streams: for terms, only text
// that could still begin one (a trie of their folded forms); for a pattern,
// which cannot say where its matches begin, its last `maxChars` - 1
// characters.
//
//   output: { terms: ["project bluebird"], patterns: [{ pattern: "\\bAKIA[0-9A-Z]{16}\\b", maxChars: 20 }], action: block }
import { foldMapped, foldedAt, originalAt, sourceOf, type Accents, type MappedReading, type OutputMatch, type OutputRules, type OutputScan } from '../../src';
import { termSource } from './matcher';
import { TermPrefixes } from './prefixes';

export interface OutputSettings {
  terms: string[];
  patterns: Array<{ pattern: string; maxChars: number }>;
  action: 'block' | 'mask';
  mask: string;
  /** Whether accents are folded away (the default) or kept: the plugin's `accents`. */
  accents?: Accents;
}

interface Rule { regex: RegExp; kind: string; maxChars: number }

export function outputRules(s: OutputSettings): OutputRules | undefined {
  if (s.terms.length === 0 && s.patterns.length === 0) return undefined;
  const accents = s.accents ?? 'fold';
  const prefixes = new TermPrefixes(s.terms, accents);
  const terms: Rule[] = s.terms.length === 0 ? [] : [{ regex: new RegExp(s.terms.map((t) => termSource(t, accents)).join('|'), 'giu'), kind: 'term', maxChars: prefixes.longest }];
  const patterns: Rule[] = s.patterns.map((p) => ({ regex: new RegExp(p.pattern, 'giu'), kind: 'pattern', maxChars: p.maxChars }));
  const patternHold = Math.max(0, ...s.patterns.map((p) => p.maxChars));
  const replacement = s.action === 'mask' ? s.mask : undefined;
  return {
    maxHoldChars: Math.max(prefixes.longest, patternHold),
    scan(text: string, from: number): OutputScan {
      const { folded, light } = foldMapped(text, patterns.length > 0, accents);
      const found: OutputMatch[] = [];
      let holdFrom = text.length;
      for (const reading of folded) {
        const at = foldedAt(reading, from);
        for (const rule of terms) find(reading, at, rule, found);
        for (const rule of patterns) find(reading, at, rule, found);
        const held = Math.min(
          terms.length > 0 ? prefixes.holdFrom(reading.text, at) : reading.text.length,
          patternHold > 0 ? Math.max(at, reading.text.length - patternHold + 1) : reading.text.length,
        );
        holdFrom = Math.min(holdFrom, originalAt(reading, held, text.length));
      }
      if (light !== undefined && light !== folded[0]) for (const rule of patterns) find(light, foldedAt(light, from), rule, found);
      return { matches: ordered(found, s.action, replacement), holdFrom };
    },
  };
}

/** Every match of `rule` in the reading from folded position `at`, as positions in the original text. */
function find(reading: MappedReading, at: number, rule: Rule, out: OutputMatch[]): void {
  const { regex } = rule;
  regex.lastIndex = at;
  for (let m = regex.exec(reading.text); m !== null; m = regex.exec(reading.text)) {
    if (m[0] === '') { regex.lastIndex++; continue; }
    const [start, end] = sourceOf(reading, m.index, m.index + m[0].length);
    out.push({ start, end, kind: rule.kind, action: 'block' });
  }
}

/** Matches in order of their start (the longest first at one start), none overlapping an earlier one, with the action set. */
function ordered(found: OutputMatch[], action: 'block' | 'mask', replacement: string | undefined): OutputMatch[] {
  if (found.length === 0) return found;
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: OutputMatch[] = [];
  let end = -1;
  for (const m of found) {
    if (m.start < end) continue;
    out.push(replacement === undefined ? { ...m, action } : { ...m, action, replacement });
    end = m.end;
  }
  return out;
}
