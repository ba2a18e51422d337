// Orders a chat stream's pieces (reasoning, text, tool-call arguments) into
// Messages' content blocks, which are strictly sequential: a block starts,
// gets its deltas and stops before the next one starts, and clients treat a
// stopped tool_use block as complete (some run the tool then and there).
//
// A chat stream may interleave tool calls by `index`. A tool block stays open
// until its arguments are a complete JSON value; a piece of anything else
// that arrives before then waits, in order, and goes out as soon as the open
// call completes (or the stream ends). A backend that sends calls one after
// another (vLLM, SGLang) thus streams every piece the moment it arrives, and
// an interleaving one has each call's pieces sent whole and in order, never
// merged with another call's or dropped.
import type { ContentBlock, MessagesEvent } from './types';

export interface ToolCallState {
  id: string;
  name: string;
  /** Every argument piece received so far. */
  args: string;
  /** The content block it was given, once opened. */
  index?: number;
  closed: boolean;
}

export type Piece = { kind: 'text'; text: string } | { kind: 'thinking'; text: string } | { kind: 'tool'; call: ToolCallState; args: string };

type Open = { kind: 'text' | 'thinking'; index: number } | { kind: 'tool'; index: number; call: ToolCallState };

export class BlockSequencer {
  private next = 0;
  private open: Open | undefined;
  private readonly waiting: Piece[] = [];

  push(piece: Piece, out: MessagesEvent[]): void {
    if (piece.kind === 'tool' && piece.call.closed) return this.late(piece.call, piece.args, out);
    if (this.matchesOpen(piece)) {
      this.delta(piece, out);
      if (this.waiting.length > 0) this.drain(false, out);
    } else if (this.waiting.length === 0 && this.closable()) {
      this.start(piece, out);
      this.delta(piece, out);
    } else {
      this.waiting.push(piece);
    }
  }

  /** The answer is over: every waiting piece goes out, and the last block stops. */
  finish(out: MessagesEvent[]): void {
    this.drain(true, out);
    this.close(out);
  }

  private matchesOpen(piece: Piece): boolean {
    const open = this.open;
    if (open === undefined || open.kind !== piece.kind) return false;
    return open.kind !== 'tool' || open.call === (piece as { call: ToolCallState }).call;
  }

  /** Text and thinking end whenever something else comes; a tool call ends when its arguments are whole. */
  private closable(): boolean {
    const open = this.open;
    return open === undefined || open.kind !== 'tool' || isCompleteJson(open.call.args);
  }

  private drain(force: boolean, out: MessagesEvent[]): void {
    while (this.waiting.length > 0 && (force || this.closable())) {
      const first = this.waiting[0];
      this.start(first, out);
      // The new block takes every waiting piece of its own call, or the run of text (or thinking) at the head.
      let run = true;
      let kept = 0;
      for (let i = 0; i < this.waiting.length; i++) {
        const piece = this.waiting[i];
        const mine = this.matchesOpen(piece) && (piece.kind === 'tool' || run);
        if (mine) this.delta(piece, out);
        else {
          run = false;
          this.waiting[kept++] = piece;
        }
      }
      this.waiting.length = kept;
    }
  }

  private start(piece: Piece, out: MessagesEvent[]): void {
    this.close(out);
    const index = this.next++;
    let block: ContentBlock;
    if (piece.kind === 'text') block = { type: 'text', text: '' };
    else if (piece.kind === 'thinking') block = { type: 'thinking', thinking: '', signature: '' };
    else {
      block = { type: 'tool_use', id: piece.call.id, name: piece.call.name, input: {} };
      piece.call.index = index;
    }
    this.open = piece.kind === 'tool' ? { kind: 'tool', index, call: piece.call } : { kind: piece.kind, index };
    out.push({ type: 'content_block_start', index, content_block: block });
  }

  private delta(piece: Piece, out: MessagesEvent[]): void {
    const index = this.open!.index;
    if (piece.kind === 'text') out.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece.text } });
    else if (piece.kind === 'thinking') out.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece.text } });
    else if (piece.args !== '') out.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece.args } });
  }

  private close(out: MessagesEvent[]): void {
    const open = this.open;
    if (open === undefined) return;
    if (open.kind === 'tool') open.call.closed = true;
    this.open = undefined;
    out.push({ type: 'content_block_stop', index: open.index });
  }

  /**
   * A piece for a call whose arguments were already whole: only whitespace can
   * follow a JSON value validly. Anything else still goes out, on the call's own
   * block (the SDKs accumulate by index), rather than being lost.
   */
  private late(call: ToolCallState, args: string, out: MessagesEvent[]): void {
    if (args.trim() === '') return;
    out.push({ type: 'content_block_delta', index: call.index!, delta: { type: 'input_json_delta', partial_json: args } });
  }
}

/** Whether a tool call's arguments so far are a whole JSON object (parsed only when it could be). */
function isCompleteJson(args: string): boolean {
  const end = args.trimEnd();
  if (!end.endsWith('}')) return false;
  try {
    JSON.parse(end);
    return true;
  } catch {
    return false;
  }
}
