// One part of an answer (a choice's text, one tool call's arguments) under
// one plugin's output rules, as it streams: the text that could still begin
// a match is held back, everything before it goes on at once, a mask
// replaces its match, a block ends the part before its match.
//
//   const w = new OutputWindow(rules, 'content-filter', sink);
//   w.push('the sec', false)  → { text: 'the ' }            ("sec" may begin "secret")
//   w.push('ret plan', false) → { text: '', block: match }  (nothing of the match goes out)
import type { OutputMatch, OutputRules } from '../../pipeline/contract';

/** Characters already sent that the next scan sees again, for rules that look behind a match (a word boundary). */
const CONTEXT_CHARS = 32;

/** Where the windows report what they acted on (the count, the access log). */
export interface WindowSink {
  acted(plugin: string, match: OutputMatch): void;
}

export interface WindowStep {
  /** What may go out now, masks applied. */
  text: string;
  /** Set when a block matched: `text` is what came before it, and nothing more of this part goes out. */
  block?: OutputMatch;
}

export class OutputWindow {
  private held = '';
  private context = '';

  constructor(private readonly rules: OutputRules, private readonly plugin: string, private readonly sink: WindowSink) {}

  /** Whether text is held back. */
  get holding(): boolean {
    return this.held !== '';
  }

  /** Adds `text`; `final` when the part ends with it (all of it is decided then). */
  push(text: string, final: boolean): WindowStep {
    if (text === '' && (this.held === '' || !final)) return { text: '' };
    const all = this.context + this.held + text;
    const from = this.context.length;
    const scan = this.rules.scan(all, from);
    let hold = final ? all.length : Math.min(all.length, Math.max(from, scan.holdFrom));
    let out = '';
    let cursor = from;
    for (const m of scan.matches) {
      if (m.start < cursor) continue;
      if (m.start >= hold) break;
      // More text may still change a match that reaches the end: it waits.
      if (!final && m.end >= all.length) { hold = m.start; break; }
      this.sink.acted(this.plugin, m);
      out += all.slice(cursor, m.start);
      if (m.action === 'block') {
        this.held = this.context = '';
        return { text: out, block: m };
      }
      out += m.replacement ?? '';
      cursor = m.end;
    }
    if (hold < cursor) hold = cursor;
    out += all.slice(cursor, hold);
    this.held = all.slice(hold);
    this.context = all.slice(Math.max(0, hold - CONTEXT_CHARS), hold);
    return { text: out };
  }
}
