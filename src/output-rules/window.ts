// One text of an answer (a choice's content, one tool call's arguments)
// under one plugin's output rules, as it streams: the text that could still
// begin a match is held back, everything before it goes on at once, a mask
// replaces its match, a block ends the text before its match. The rules read
// the text as a client reads it (view.ts): JSON escapes decoded, long runs of
// filler read short, so each delta costs what it adds, whatever it holds.
//
// A text may stop and go on later (a choice's content, interrupted by a tool
// call or an early finish reason, a message's next content part): `flush`
// sends what was held, and keeps what could still begin a match as context,
// so a match completed by the text that goes on is still caught (a block
// cuts there; a mask replaces the rest of it).
//
//   const w = new OutputWindow(rules, 'content-filter', sink);
//   w.push('the sec', 'more') → { text: 'the ' }            ("sec" may begin "secret")
//   w.push('ret plan', 'more') → { text: '', block: match }  (nothing of the match goes out)
import type { OutputMatch, OutputRules } from '../contract/plugin';
import { RawText } from './raw-text';
import { TextView } from './view';

/** Characters already read that the next scan sees again, for rules that look behind a match (a word boundary). */
const CONTEXT_CHARS = 32;

/** more: text follows; flush: this stretch ends, the text may go on; final: the text ends. */
export type WindowMode = 'more' | 'flush' | 'final';

/** Where the windows report what they acted on (the count, the access log). */
export interface WindowSink {
  acted(plugin: string, match: OutputMatch): void;
}

export interface WindowStep {
  /** What may go out now, masks applied. */
  text: string;
  /** Set when a block matched: `text` is what came before it, and nothing more of this text goes out. */
  block?: OutputMatch;
}

export class OutputWindow {
  private readonly view = new TextView();
  private readonly raw = new RawText();
  /** Index in the view: what comes before it went out. */
  private sent = 0;
  /** Index in the view: where a match may still begin; before it, context. */
  private from = 0;

  /** `json`: the text is JSON (tool arguments), so a mask's replacement goes in escaped. */
  constructor(private readonly rules: OutputRules, private readonly plugin: string, private readonly sink: WindowSink, private readonly json = false) {}

  /** Whether text is held back. */
  get holding(): boolean {
    return this.raw.sent < this.raw.end;
  }

  /** Adds `text`; the mode says whether more follows (see WindowMode). */
  push(text: string, mode: WindowMode): WindowStep {
    if (text === '' && (mode === 'more' || !this.holding)) {
      if (mode === 'final') this.reset();
      return { text: '' };
    }
    if (text !== '') {
      const grew = this.view.append(text, this.raw.end);
      this.raw.append(text);
      // Only filler the view leaves out: the rules would read what they read before.
      if (!grew && mode === 'more') return { text: this.sent === this.view.text.length ? this.raw.take(this.view.end) : '' };
    }
    if (mode !== 'more') this.view.finish(this.raw.end);
    const all = this.view.text;
    const scan = this.rules.scan(all, this.from);
    let hold = mode === 'more' ? Math.max(this.sent, Math.min(all.length, scan.holdFrom)) : all.length;
    // Filler after the last character that could begin a match goes out: a match begins at a character
    // that shows, and one that would begin before it is still found (it stays in view, from `from` on).
    if (hold > this.view.lastSolid) hold = all.length;
    let out = '';
    let cursor = this.sent;
    let after = this.from;
    for (const m of scan.matches) {
      if (m.end <= this.sent) continue; // decided when the text before it went out
      if (m.start >= hold) break;
      // More text may still change a match that reaches the end: it waits.
      if (mode === 'more' && m.end >= all.length) { hold = Math.max(this.sent, m.start); break; }
      this.sink.acted(this.plugin, m);
      if (m.start > cursor) out += this.raw.take(this.view.rawAt(m.start));
      if (m.action === 'block') {
        this.reset();
        return { text: out, block: m };
      }
      if (m.replacement) out += this.json ? JSON.stringify(m.replacement).slice(1, -1) : m.replacement;
      this.raw.skip(this.view.rawAt(m.end));
      cursor = after = m.end;
    }
    if (hold < cursor) hold = cursor;
    out += this.raw.take(this.view.rawAt(hold));
    if (mode === 'final') {
      this.reset();
      return { text: out };
    }
    this.sent = hold;
    this.from = Math.max(after, Math.min(scan.holdFrom, hold));
    const forget = Math.max(0, this.from - CONTEXT_CHARS);
    this.view.drop(forget);
    this.sent -= forget;
    this.from -= forget;
    return { text: out };
  }

  private reset(): void {
    this.raw.clear();
    this.view.clear(this.raw.end);
    this.sent = this.from = 0;
  }
}
