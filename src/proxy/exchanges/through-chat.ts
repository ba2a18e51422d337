// A chat-completions backend's answer in another client protocol: the JSON
// answer translated whole, a stream translated one chunk at a time (each
// chunk's events go out with it; nothing waits beyond what the protocol's
// event order needs). The protocol's own translator (src/protocols/*) makes
// the events; this carries them through the relay and keeps the request's
// usage, its count of streamed characters, and its failures.
import type { Context } from '../../pipeline/context';
import { errorType, type GatewayError } from '../../contract/errors';
import type { ProtocolUsage } from '../../protocols/usage';
import type { Emit, StreamTransformer } from '../formats/format';
import { badAnswer } from '../status';
import { estimateUsage, publicUsage } from '../../request/usage';
import type { Usage } from '../../contract/plugin';
import { coreUsage, isRecord, readEvent } from '../exchange';
import { chatOutputOf } from '../../output-rules/answers';
import type { ChatOutput } from '../../output-rules/chat';

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
  /** What the answer cost as far as this transformer knows (see StreamTransformer.usage); the relay records it. */
  usage?: Usage;
  /** The backend said why the first choice ended: a close without [DONE] after it is a complete answer. */
  private finished = false;
  /** A rule cut the answer: the rest of the backend's stream is read only for its usage. */
  cutting = false;
  private readonly output?: ChatOutput;

  constructor(
    private readonly ctx: Context,
    private readonly upstream: string,
    private readonly translator: ChatStreamTranslator,
    /** Called once with the end of a complete answer (storage); undefined: nothing to keep. */
    private readonly completed?: () => void,
  ) {
    this.output = chatOutputOf(ctx);
  }

  push(data: string, emit: Emit): void {
    if (this.cutting) return this.usageAfterCut(data);
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
    if (this.output !== undefined && Array.isArray(chunk.choices)) this.filter(chunk.choices as unknown[]);
    this.send(this.translator.push(chunk), emit);
  }

  /** The choices' texts as they may go out now (in place: the chunk is this transformer's own); a block ends them there. */
  private filter(choices: unknown[]): void {
    const output = this.output!;
    for (let i = 0; i < choices.length; i++) {
      const c = choices[i];
      if (!isRecord(c)) continue;
      const finishing = typeof c.finish_reason === 'string';
      c.delta = output.delta(typeof c.index === 'number' ? c.index : i, isRecord(c.delta) ? c.delta : {}, finishing);
      if (!output.blocked) continue;
      // The translation hears why the answer ended from endCut: content_filter.
      c.finish_reason = null;
      choices.length = i + 1;
      this.cutting = true;
    }
  }

  /** Ends an answer a rule cut: the translation's ending for content_filter, with the usage (reported, else estimated). */
  endCut(emit: Emit): void {
    this.send(this.translator.push({ choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] }), emit);
    const estimate = this.translator.usage === undefined ? estimateUsage(this.ctx, this.ctx.forwarding.streamedChars) : undefined;
    if (estimate !== undefined) this.send(this.translator.push({ choices: [], usage: publicUsage(estimate) }), emit);
    this.end(emit);
    if (estimate !== undefined) this.usage = estimate;
  }

  /** After a cut, a usage the backend reports in the same read still reaches the translation (and the charge). */
  private usageAfterCut(data: string): void {
    if (data === '[DONE]') return;
    const chunk = readEvent(data, this.upstream);
    if (isRecord(chunk) && isRecord(chunk.usage)) this.translator.push({ choices: [], usage: chunk.usage });
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
    // A stream that ended without its finish reasons: what the rules still held goes out first.
    const tails = this.output?.endAll() ?? [];
    if (tails.length > 0) this.send(this.translator.push({ choices: tails.map(([index, delta]) => ({ index, delta, finish_reason: null })) }), emit);
    this.send(this.translator.end(), emit);
    this.done = true;
    const usage = this.translator.usage;
    this.usage = usage !== undefined ? coreUsage(usage) : estimateUsage(this.ctx, this.ctx.forwarding.streamedChars);
    this.completed?.();
  }

  private send(events: readonly ProtocolEvent[], emit: Emit): void {
    for (const e of events) emit(JSON.stringify(e), e.type);
    const last = events.at(-1) as { sequence_number?: unknown } | undefined;
    if (typeof last?.sequence_number === 'number') this.lastSequence = last.sequence_number;
  }
}
