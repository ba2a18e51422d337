// What a traced request's answer said, read from what the client got (so
// after every plugin's rewrite): the response id, the model that answered,
// the finish reasons, and (captureContent) the text. A JSON answer is read
// once; of a stream only the events that carry these are parsed: a chat
// chunk is parsed when it is the first or names a finish reason, a Responses
// or Messages event by its name, and text deltas only when text is captured.
import type { ClientProtocol } from '../contract/types';

/** Output text kept per request at most (characters): a captured answer is bounded like any attribute. */
export const MAX_CAPTURED_CHARS = 64 * 1024;

/** A JSON answer larger than this is not parsed for its id, model and finish reasons. */
const MAX_PARSED_BYTES = 4 * 1024 * 1024;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export class AnswerFacts {
  id?: string;
  model?: string;
  readonly finishReasons: string[] = [];
  text?: string;
  private chunks = 0;

  constructor(private readonly protocol: ClientProtocol, private readonly capture: boolean) {
    if (capture) this.text = '';
  }

  /** A JSON answer as the client got it. */
  json(body: string): void {
    if (body.length > MAX_PARSED_BYTES) return;
    let answer: unknown;
    try {
      answer = JSON.parse(body);
    } catch {
      return;
    }
    if (!isObject(answer)) return;
    this.id = str(answer.id);
    this.model = str(answer.model);
    if (this.protocol === 'chat') {
      for (const c of Array.isArray(answer.choices) ? answer.choices : []) {
        if (!isObject(c)) continue;
        this.finish(c.finish_reason);
        if (isObject(c.message)) this.add(c.message.content);
      }
    } else if (this.protocol === 'responses') {
      this.responseEnd(answer);
      for (const item of Array.isArray(answer.output) ? answer.output : []) {
        if (isObject(item) && Array.isArray(item.content)) for (const part of item.content) if (isObject(part)) this.add(part.text);
      }
    } else {
      this.finish(answer.stop_reason);
      for (const block of Array.isArray(answer.content) ? answer.content : []) if (isObject(block)) this.add(block.text);
    }
  }

  /** One event as sent to the client; `name` is its event: line (Responses, Messages). */
  event(data: string, name: string | undefined): void {
    switch (this.protocol) {
      case 'chat': {
        const first = this.chunks++ === 0;
        if (!first && !this.capture && !data.includes('"finish_reason":"')) return;
        const chunk = parse(data);
        if (chunk === undefined) return;
        if (first) { this.id = str(chunk.id); this.model = str(chunk.model); }
        for (const c of Array.isArray(chunk.choices) ? chunk.choices : []) {
          if (!isObject(c)) continue;
          this.finish(c.finish_reason);
          if (isObject(c.delta)) this.add(c.delta.content);
        }
        return;
      }
      case 'responses':
        if (name === 'response.created') {
          const r = parse(data)?.response;
          if (isObject(r)) { this.id = str(r.id); this.model = str(r.model); }
        } else if (name === 'response.completed' || name === 'response.incomplete' || name === 'response.failed') {
          const r = parse(data)?.response;
          if (isObject(r)) this.responseEnd(r);
        } else if (this.capture && name === 'response.output_text.delta') this.add(parse(data)?.delta);
        return;
      default:
        if (name === 'message_start') {
          const m = parse(data)?.message;
          if (isObject(m)) { this.id = str(m.id); this.model = str(m.model); }
        } else if (name === 'message_delta') {
          const d = parse(data)?.delta;
          if (isObject(d)) this.finish(d.stop_reason);
        } else if (this.capture && name === 'content_block_delta') {
          const d = parse(data)?.delta;
          if (isObject(d)) this.add(d.text);
        }
    }
  }

  /** A Responses answer's end: why it stopped short, else its status. */
  private responseEnd(r: Json): void {
    this.id ??= str(r.id);
    this.model ??= str(r.model);
    const why = isObject(r.incomplete_details) ? str(r.incomplete_details.reason) : undefined;
    this.finish(why ?? r.status);
  }

  private finish(reason: unknown): void {
    if (typeof reason === 'string' && reason !== '') this.finishReasons.push(reason);
  }

  private add(text: unknown): void {
    if (this.text === undefined || typeof text !== 'string' || this.text.length >= MAX_CAPTURED_CHARS) return;
    this.text += text.slice(0, MAX_CAPTURED_CHARS - this.text.length);
  }
}

function parse(data: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
