// A backend that serves the client's protocol itself: its events go to the
// client as it sent them (only the model it names is the client's id, as in
// every answer), read on the way for the usage and the final answer. A stream
// that closes before its terminal event was cut.
import type { Context } from '../../pipeline/context';
import { errorType, type GatewayError } from '../../contract/errors';
import type { ProtocolUsage } from '../../protocols/usage';
import type { Emit, StreamTransformer } from '../formats/format';
import { estimateUsage } from '../../request/usage';
import type { Usage } from '../../contract/plugin';
import { coreUsage, isRecord, readEvent } from '../exchange';
import { frames, type ProtocolEvent } from './through-chat';
import { OutputText } from '../../output-rules/text';
import type { NativeOutput } from '../../output-rules/native-events';

/** What a protocol's reader of native events provides (ResponsesObserver, NativeMessagesObserver). */
export interface NativeObserver {
  observe(event: object): void;
  readonly done: boolean;
  readonly usage: ProtocolUsage | undefined;
}

/** The protocol-specific parts of relaying its events. */
export interface NativeDialect {
  observer(): NativeObserver;
  /** Writes the client's names (its model id; the gateway's response id) where the event has the backend's; true when it changed the event. */
  rename(event: Record<string, unknown>, names: Names): boolean;
  /** Generated characters the event carries (the usage estimate of a stream cut short). */
  chars(event: Record<string, unknown>): number;
  /** Whether the event ends the stream (besides what the observer counts as done: an error event). */
  ends(event: Record<string, unknown>): boolean;
  /** The events that end a stream that failed after it started; `last` is the last event relayed, `seen` the observer that read them. */
  failure(failure: { type: string; code: string; message: string }, last: Record<string, unknown> | undefined, requestId: string, seen: NativeObserver): ProtocolEvent[];
  /** Output rules on the protocol's events (src/output-rules/*-events.ts). */
  output(text: OutputText): NativeOutput;
}

/** What the client knows its answer by: the model it asked for, and (Responses) the id the gateway gave it. */
export interface Names {
  model: string;
  id?: string;
  /** Fields the answer echoes from a request the gateway changed on the way (Responses: previous_response_id, store), as the client sent them. */
  echo?: Readonly<Record<string, unknown>>;
  /** Told the backend's own response id, when the client gets it as is (Responses, when the gateway keeps no turns). */
  issued?: (id: string) => void;
}

export class NativeRelay implements StreamTransformer {
  done = false;
  lastSequence?: number;
  /** What the answer cost as far as this transformer knows (see StreamTransformer.usage); the relay records it. */
  usage?: Usage;
  /** A rule cut the answer: the rest of the backend's stream is read only for its usage. */
  cutting = false;
  private readonly observer: NativeObserver;
  private last?: Record<string, unknown>;
  /** The request's output rules over the protocol's text and argument deltas; undefined when it has none. */
  private readonly output?: NativeOutput;
  /** The usage the backend reported after the cut, in the same read. */
  private usageAfterCut?: ProtocolUsage;

  constructor(private readonly ctx: Context, private readonly upstream: string, private readonly dialect: NativeDialect, private readonly names: Names, private readonly completed?: (observer: NativeObserver) => void) {
    this.observer = dialect.observer();
    const policy = ctx.forwarding.output;
    if (policy !== undefined) this.output = dialect.output(new OutputText(policy, ctx.forwarding));
  }

  push(data: string, emit: Emit): void {
    const event = readEvent(data, this.upstream);
    if (this.cutting) {
      if (isRecord(event)) this.usageAfterCut = this.output!.usageAfterCut(event, this.observer.usage) ?? this.usageAfterCut;
      return;
    }
    // Not an event this protocol names: relayed as it came, and otherwise ignored.
    if (!isRecord(event) || typeof event.type !== 'string') return emit(data);
    this.ctx.forwarding.streamedChars += this.dialect.chars(event);
    const out = this.output?.filter(event);
    if (out === undefined) this.send(event, data, emit);
    else for (const e of out) this.send(e, undefined, emit);
    if (!this.output?.blocked) return;
    this.cutting = true;
    // The event cut may be the one that reports the usage (a Responses answer whose text only its terminal event carries).
    this.usageAfterCut = this.output.usageAfterCut(event, this.observer.usage);
  }

  /** Ends an answer a rule cut in the protocol, with the usage: the backend's if it came, else what it said so far and an estimate of the rest. */
  endCut(emit: Emit): void {
    const seen = this.observer.usage;
    const estimate = estimateUsage(this.ctx, this.ctx.forwarding.streamedChars);
    const usage = this.usageAfterCut ?? { input_tokens: seen?.input_tokens ?? estimate.prompt_tokens, output_tokens: Math.max(seen?.output_tokens ?? 0, estimate.completion_tokens) };
    for (const e of this.output!.cut(usage)) this.send(e, undefined, emit);
    this.finish();
    this.usage = { ...coreUsage(usage), estimated: this.usageAfterCut === undefined };
  }

  private send(event: Record<string, unknown>, data: string | undefined, emit: Emit): void {
    this.observer.observe(event);
    this.last = event;
    if (typeof event.sequence_number === 'number') this.lastSequence = event.sequence_number;
    const renamed = this.dialect.rename(event, this.names);
    emit(renamed || data === undefined ? JSON.stringify(event) : data, event.type as string);
    if (this.observer.done || this.dialect.ends(event)) this.finish();
  }

  finishIfComplete(): boolean {
    return false; // a native stream is complete only with its terminal event
  }

  failure(err: GatewayError): string {
    return frames(this.dialect.failure({ type: err.type ?? errorType(err.status), code: err.code, message: err.message }, this.last, this.ctx.id, this.observer));
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    const usage = this.observer.usage;
    this.usage = usage !== undefined ? coreUsage(usage) : estimateUsage(this.ctx, this.ctx.forwarding.streamedChars);
    this.completed?.(this.observer);
  }
}
