// Output rules on chat-completions chunks, for every stream that carries
// them (the openai and native formats, and a chat backend's stream on its way
// to a Responses or Messages client): each choice's content and each tool
// call's arguments are parts of their own. A choice moves from one part to
// the next in order (its text, then its tool calls), so when it moves on,
// the part it leaves is over and what it held goes out first, in the same
// delta, ahead of the new part; its finish reason ends its last part.
import { OutputText } from './text';

type Delta = Record<string, unknown>;
type ToolCallDelta = { index?: unknown; function?: { arguments?: unknown } & Record<string, unknown> } & Record<string, unknown>;

export class ChatOutput {
  /** Per choice, the part it is in: "c" (content) or "t<index>" (a tool call). */
  private readonly current = new Map<number, string>();

  constructor(readonly text: OutputText) {}

  get blocked(): boolean {
    return this.text.blocked !== undefined;
  }

  /**
   * A choice's delta with its texts as they may go out now: held text of a
   * part it leaves first, masks applied; the same object when nothing
   * changed. `finishing`: the chunk carries the choice's finish reason.
   */
  delta(index: number, delta: Delta, finishing: boolean): Delta {
    let content = typeof delta.content === 'string' && delta.content !== '' ? delta.content : undefined;
    const calls = Array.isArray(delta.tool_calls) ? (delta.tool_calls as unknown[]) : undefined;
    if (content === undefined && calls === undefined && !finishing) return delta;
    const out = new Parts();
    if (content !== undefined) {
      this.moveTo(index, 'c', out);
      out.content += this.text.push(`${index}:c`, content);
    }
    if (calls !== undefined) {
      calls.forEach((raw, position) => {
        if (raw === null || typeof raw !== 'object') return;
        const call = raw as ToolCallDelta;
        const k = typeof call.index === 'number' ? call.index : position;
        this.moveTo(index, `t${k}`, out);
        const args = call.function?.arguments;
        if (typeof args !== 'string' || args === '') return void out.calls.push(call);
        const released = this.text.push(`${index}:t${k}`, args);
        // A piece of arguments wholly held back goes out later; a call's first delta (its id and name) goes now.
        if (released !== '' || call.id !== undefined || call.function?.name !== undefined) out.calls.push(released === args ? call : { ...call, function: { ...call.function, arguments: released } });
      });
    }
    if (finishing) this.leave(index, out);
    if (content === out.content && (calls === undefined || sameCalls(calls, out.calls))) return delta;
    return out.applyTo(delta, content !== undefined);
  }

  /** The end of the stream: every part still open gives what it held, per choice (a stream that ended without finish reasons). */
  endAll(): Array<[number, Delta]> {
    const out: Array<[number, Delta]> = [];
    for (const index of [...this.current.keys()]) {
      const parts = new Parts();
      this.leave(index, parts);
      if (parts.content !== '' || parts.calls.length > 0) out.push([index, parts.applyTo({}, false)]);
    }
    return out;
  }

  private moveTo(index: number, part: string, out: Parts): void {
    const at = this.current.get(index);
    if (at === part) return;
    if (at !== undefined) this.release(index, at, out);
    this.current.set(index, part);
  }

  private leave(index: number, out: Parts): void {
    const at = this.current.get(index);
    if (at === undefined) return;
    this.current.delete(index);
    this.release(index, at, out);
  }

  private release(index: number, part: string, out: Parts): void {
    const tail = this.text.end(`${index}:${part}`);
    if (tail === '') return;
    if (part === 'c') out.content += tail;
    else out.calls.push({ index: Number(part.slice(1)), function: { arguments: tail } });
  }
}

/** What a delta's texts become: its content, and its tool-call pieces in order. */
class Parts {
  content = '';
  calls: ToolCallDelta[] = [];

  applyTo(delta: Delta, hadContent: boolean): Delta {
    const next: Delta = { ...delta };
    if (this.content !== '' || hadContent) next.content = this.content;
    if (this.calls.length > 0) next.tool_calls = this.calls;
    else delete next.tool_calls;
    return next;
  }
}

const sameCalls = (a: readonly unknown[], b: readonly unknown[]): boolean => a.length === b.length && a.every((c, i) => c === b[i]);
