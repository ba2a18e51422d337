// A chat-completions backend's answer in another client protocol: the JSON
// answer translated whole, a stream translated one chunk at a time (each
// chunk's events go out with it; nothing waits beyond what the protocol's
// event order needs). The protocol's own translator (src/protocols/*) makes
// the events; this carries them through the relay and keeps the request's
// usage, its count of streamed characters, and its failures.
import type { Context } from '../../pipeline/context';
import { errorType, type GatewayError } from '../../errors';
import type { ProtocolUsage } from '../../protocols/usage';
import type { Emit, StreamTransformer } from '../formats/format';
import { badAnswer } from '../status';
import { estimateUsage } from '../usage';
import { coreUsage, isRecord, readEvent } from '../exchange';

export interface ProtocolEvent { readonly type: string }

/** What a protocol's translator of a chat stream provides (ResponsesStream, MessagesStream). */
export interface ChatStreamTranslator {
  push(chunk: object): ProtocolEvent[];
  end(): ProtocolEvent[];
  fail(failure: { type: string; code: string; message: string }, requestId?: string): ProtocolEvent[];
  ping?(): ProtocolEvent[];
  readonly usage: ProtocolUsage | undefined;
  /** The answer as it stands mid-stream (Responses: its output items). */
  outputSoFar?(): readonly object[];
  /** The final answer, once end() or fail() made it (Responses: the response object). */
  readonly response?: object;
}

/** Events as server-sent events: each with its `event:` name. */
export function frames(events: readonly ProtocolEvent[]): string {
  let out = '';
  for (const e of events) out += `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
  return out;
}

/** Generated characters in a chat delta: text, reasoning, tool-call arguments (the usage estimate when none is reported). */
function deltaChars(delta: Record<string, unknown>): number {
  let chars = 0;
  for (const key of ['content', 'reasoning_content', 'reasoning']) if (typeof delta[key] === 'string') chars += (delta[key] as string).length;
  if (Array.isArray(delta.tool_calls)) for (const t of delta.tool_calls) if (typeof t?.function?.arguments === 'string') chars += t.function.arguments.length;
  return chars;
}

/** A chat stream's chunks through a protocol's translator, to the client as that protocol's events. */
export class ThroughChat implements StreamTransformer {
  done = false;
  lastSequence?: number;
  /** The backend said why the first choice ended: a close without [DONE] after it is a complete answer. */
  private finished = false;

  constructor(
    private readonly ctx: Context,
    private readonly upstream: string,
    private readonly translator: ChatStreamTranslator,
    /** Called once with the end of a complete answer (storage); undefined: nothing to keep. */
    private readonly completed?: () => void,
  ) {}

  push(data: string, emit: Emit): void {
    if (data === '[DONE]') return this.end(emit);
    const chunk = readEvent(data, this.upstream);
    // One malformed event does not sink an otherwise healthy stream: skipped, and counted in the access log.
    if (!isRecord(chunk)) { this.ctx.forwarding.skippedEvents++; return; }
    if (chunk.error) throw badAnswer(this.upstream, 'the backend reported an error mid-stream', true);
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (isRecord(choice)) {
      if (isRecord(choice.delta)) this.ctx.forwarding.streamedChars += deltaChars(choice.delta);
      if (typeof choice.finish_reason === 'string') this.finished = true;
    }
    this.send(this.translator.push(chunk), emit);
  }

  finishIfComplete(emit: Emit): boolean {
    if (!this.finished) return false;
    this.end(emit);
    return true;
  }

  failure(err: GatewayError): string {
    return frames(this.translator.fail({ type: err.type ?? errorType(err.status), code: err.code, message: err.message }, this.ctx.id));
  }

  partial(): { response?: object; output?: readonly object[] } {
    return { response: this.translator.response, output: this.translator.outputSoFar?.() };
  }

  ping(): string | undefined {
    const events = this.translator.ping?.();
    return events === undefined || events.length === 0 ? undefined : frames(events);
  }

  private end(emit: Emit): void {
    if (this.done) return;
    this.send(this.translator.end(), emit);
    this.done = true;
    const usage = this.translator.usage;
    this.ctx.usage = usage !== undefined ? coreUsage(usage) : estimateUsage(this.ctx, this.ctx.forwarding.streamedChars);
    this.completed?.();
  }

  private send(events: readonly ProtocolEvent[], emit: Emit): void {
    for (const e of events) emit(JSON.stringify(e), e.type);
    const last = events.at(-1) as { sequence_number?: unknown } | undefined;
    if (typeof last?.sequence_number === 'number') this.lastSequence = last.sequence_number;
  }
}
