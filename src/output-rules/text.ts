// An answer's text under every plugin's output rules, part by part: the one
// mechanism every stream kind and protocol calls with each text delta (a
// choice's content, a tool call's arguments; a native stream's text and
// argument deltas), and JSON answers with each whole text. Each part has a
// window per plugin, chained in the chain's order: what one releases, the
// next one reads. A plugin with no rules for the request adds nothing here,
// and a request with none has no OutputText at all.
//
// A part is a text as the client reads it, which may arrive in stretches:
// a choice's content around its tool calls, a message's text over several
// content parts or blocks. `flush` ends a stretch (what was held goes out)
// and the part goes on with the next push; `end` ends the part.
//
//   const out = new OutputText(policy, ctx.forwarding);
//   send(out.push('0:c', delta));  ...  send(out.end('0:c'));   // out.blocked: cut the answer there
import type { OutputMatch } from '../contract/plugin';
import type { Forwarding } from '../pipeline/context';
import type { OutputPolicy } from '../pipeline/output-policy';
import { OutputWindow, type WindowMode, type WindowSink } from './window';

/** What a part's text is: text, reasoning (read by the rules that read it), or JSON (tool arguments: masks go in escaped). */
export type PartKind = 'text' | 'reasoning' | 'json';

/** Where the request notes what the rules did (its forwarding state, read by the access log). */
type FilteredNote = Pick<Forwarding, 'filtered'>;

export class OutputText implements WindowSink {
  /** The match that ended the answer, once one did. */
  blocked?: OutputMatch;
  /** Whether a mask replaced text (events that repeat the whole text must then repeat the masked one). */
  masked = false;
  private readonly parts = new Map<string, OutputWindow[]>();

  constructor(private readonly policy: OutputPolicy, private readonly note: FilteredNote) {}

  /**
   * Text of a part as it streams; returns what may go out now (after a
   * block: what came before the match, then nothing). `kind` counts when the
   * part's first text comes.
   */
  push(part: string, text: string, kind: PartKind = 'text'): string {
    return this.blocked === undefined ? this.run(this.windowsOf(part, kind), text, 'more') : '';
  }

  /** A stretch of the part is over, and the part may go on: returns what it held, kept as context for what follows. */
  flush(part: string): string {
    const windows = this.parts.get(part);
    return windows === undefined || this.blocked !== undefined ? '' : this.run(windows, '', 'flush');
  }

  /** The part is over: returns what it still held, checked as final. */
  end(part: string): string {
    const windows = this.parts.get(part);
    if (windows === undefined || this.blocked !== undefined) return '';
    this.parts.delete(part);
    return this.run(windows, '', 'final');
  }

  /** The parts that hold text back, whose prefix is `prefix` (all with ''). */
  holding(prefix: string): string[] {
    const out: string[] = [];
    for (const [part, windows] of this.parts) if (part.startsWith(prefix) && windows.some((w) => w.holding)) out.push(part);
    return out;
  }

  /** A whole text (of a JSON answer, or an event that repeats a part whole): checked as final, in windows of its own. */
  whole(text: string, kind: PartKind = 'text'): string {
    if (this.blocked !== undefined) return '';
    return this.run(this.windowsFor(kind), text, 'final');
  }

  acted(plugin: string, match: OutputMatch): void {
    this.policy.counter?.inc({ plugin, kind: match.kind, action: match.action });
    if (match.action === 'mask') this.masked = true;
    this.note.filtered = match.action === 'block' || this.note.filtered === 'block' ? 'block' : 'mask';
  }

  private windowsOf(part: string, kind: PartKind): OutputWindow[] {
    let windows = this.parts.get(part);
    if (windows === undefined) {
      windows = this.windowsFor(kind);
      this.parts.set(part, windows);
    }
    return windows;
  }

  /** A window per plugin whose rules read this kind of text. */
  private windowsFor(kind: PartKind): OutputWindow[] {
    const windows: OutputWindow[] = [];
    for (const { plugin, rules } of this.policy.rules) {
      if (kind !== 'reasoning' || rules.readsReasoning !== false) windows.push(new OutputWindow(rules, plugin, this, kind === 'json'));
    }
    return windows;
  }

  /** Through each window in turn; after a block, the windows after it decide the text before the match as final. */
  private run(windows: readonly OutputWindow[], text: string, mode: WindowMode): string {
    for (const w of windows) {
      const step = w.push(text, mode);
      text = step.text;
      if (step.block !== undefined && this.blocked === undefined) {
        this.blocked = step.block;
        mode = 'final';
      }
    }
    return text;
  }
}
