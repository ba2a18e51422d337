// A custom (free-form) tool for a chat backend, which knows only functions
// with JSON arguments: a function with one string parameter, `input`, whose
// description carries the input's grammar (clipped), as chat has no way to
// constrain an argument by one. The model's arguments are read back into the
// free-form input, in one piece (JSON answer) or as they stream, and both
// readings give the same text:
//   1. `{"input": "…"` first: the decoded string, as far as it goes (a call cut
//      off by the token cap keeps what it got); whatever follows is ignored;
//   2. otherwise JSON with a string `input` (other keys first): that string;
//   3. otherwise the raw arguments (a model that wrote the input as is).
//
//   const reader = new CustomInputReader();
//   for each arguments piece: send(reader.push(piece)); send(reader.end());
import { isObject } from '../json';
import type { CustomToolFormat } from './types';

/** The most of a grammar the input's description shows: Codex's exec grammar is a few lines, a whole language's many KB. */
export const GRAMMAR_MAX = 4096;

/** The parameters of the function that stands for a custom tool. */
export function customParameters(format: CustomToolFormat | null | undefined): Record<string, unknown> {
  return {
    type: 'object',
    properties: { input: { type: 'string', description: inputDescription(format) } },
    required: ['input'],
    additionalProperties: false,
  };
}

function inputDescription(format: CustomToolFormat | null | undefined): string {
  const grammar = format?.type === 'grammar' ? format as { definition?: unknown; syntax?: unknown } : {};
  if (typeof grammar.definition !== 'string') return "The tool's input: free-form text, as the tool's description says (not JSON).";
  const syntax = typeof grammar.syntax === 'string' ? grammar.syntax : 'lark';
  return `The tool's input: raw text (not JSON) matching this ${syntax} grammar:\n${clip(grammar.definition, GRAMMAR_MAX)}`;
}

/** At most `max` UTF-16 units, never half a surrogate pair, marked when cut. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}\n… (clipped: the grammar has ${text.length} characters)`;
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;

const HEAD = /^[ \t\n\r]*\{[ \t\n\r]*"input"[ \t\n\r]*:[ \t\n\r]*"/;
/** Text that may still become HEAD as more arguments arrive. */
const HEAD_PREFIX = /^[ \t\n\r]*(?:\{[ \t\n\r]*(?:"(?:i(?:n(?:p(?:u(?:t(?:"[ \t\n\r]*(?::[ \t\n\r]*)?)?)?)?)?)?)?)?)?$/;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** Reads a custom tool's input out of a function call's arguments, piece by piece (see the rules above). */
export class CustomInputReader {
  /** The arguments, kept until the reading is known, and to the end when it is the whole of them. */
  private args = '';
  private mode: 'head' | 'text' | 'escape' | 'unicode' | 'after' | 'other' = 'head';
  private hex = '';
  /** A high surrogate, sent with the low one after it: a lone half is not valid in the JSON of an event. */
  private held = '';

  /** The input text this piece adds; '' while the reading is not yet known or when it comes whole at the end. */
  push(piece: string): string {
    if (this.mode === 'other') this.args += piece;
    if (!this.inString() && this.mode !== 'head') return '';
    let from = 0;
    if (this.mode === 'head') {
      const before = this.args.length;
      this.args += piece;
      const head = HEAD.exec(this.args);
      if (!head) {
        if (!HEAD_PREFIX.test(this.args)) this.mode = 'other';
        return '';
      }
      this.mode = 'text';
      from = head[0].length - before;
      this.args = '';
    }
    let out = this.held;
    this.held = '';
    for (let i = from; i < piece.length && this.inString(); i++) out += this.read(piece[i]);
    if (this.inString() && out !== '' && isHighSurrogate(out.charCodeAt(out.length - 1))) {
      this.held = out.slice(-1);
      out = out.slice(0, -1);
    }
    return out;
  }

  /** After the last piece: the rest of the input (all of it when it was not `{"input": "…"`). */
  end(): string {
    if (this.mode === 'head' || this.mode === 'other') {
      this.mode = 'after';
      return wholeInput(this.args);
    }
    this.mode = 'after';
    const rest = this.held;
    this.held = '';
    return rest;
  }

  private inString(): boolean {
    return this.mode === 'text' || this.mode === 'escape' || this.mode === 'unicode';
  }

  private read(c: string): string {
    switch (this.mode) {
      case 'escape':
        this.mode = c === 'u' ? 'unicode' : 'text';
        this.hex = '';
        return c === 'u' ? '' : ESCAPES[c] ?? c;
      case 'unicode':
        this.hex += c;
        if (this.hex.length < 4) return '';
        this.mode = 'text';
        return HEX4.test(this.hex) ? String.fromCharCode(parseInt(this.hex, 16)) : `\\u${this.hex}`;
      default:
        if (c === '"') this.mode = 'after';
        else if (c === '\\') this.mode = 'escape';
        else return c;
        return '';
    }
  }
}

function wholeInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (isObject(parsed) && typeof parsed.input === 'string') return parsed.input;
  } catch {
    // Not JSON: the model wrote the input itself.
  }
  return args;
}

/** A custom tool's input from a whole arguments string (the JSON answer). */
export function customInput(args: string): string {
  const reader = new CustomInputReader();
  return reader.push(args) + reader.end();
}
