// A backend that serves the client's protocol itself: its events go to the
// client as it sent them (only the model it names is the client's id, as in
// every answer), read on the way for the usage and the final answer. A stream
// that closes before its terminal event was cut.
import type { Context } from '../../pipeline/context';
import { errorType, type GatewayError } from '../../errors';
import type { ProtocolUsage } from '../../protocols/usage';
import type { Emit, StreamTransformer } from '../formats/format';
import { estimateUsage } from '../usage';
import { coreUsage, isRecord, readEvent } from '../exchange';
import { frames, type ProtocolEvent } from './through-chat';

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
}

/** What the client knows its answer by: the model it asked for, and (Responses) the id the gateway gave it. */
export interface Names {
  model: string;
  id?: string;
  /** Fields the answer echoes from a request the gateway changed on the way (Responses: previous_response_id, store), as the client sent them. */
  echo?: Readonly<Record<string, unknown>>;
}

export class NativeRelay implements StreamTransformer {
  done = false;
  lastSequence?: number;
  private readonly observer: NativeObserver;
  private last?: Record<string, unknown>;

  constructor(private readonly ctx: Context, private readonly upstream: string, private readonly dialect: NativeDialect, private readonly names: Names, private readonly completed?: (observer: NativeObserver) => void) {
    this.observer = dialect.observer();
  }

  push(data: string, emit: Emit): void {
    const event = readEvent(data, this.upstream);
    // Not an event this protocol names: relayed as it came, and otherwise ignored.
    if (!isRecord(event) || typeof event.type !== 'string') return emit(data);
    this.observer.observe(event);
    this.last = event;
    if (typeof event.sequence_number === 'number') this.lastSequence = event.sequence_number;
    this.ctx.forwarding.streamedChars += this.dialect.chars(event);
    const renamed = this.dialect.rename(event, this.names);
    emit(renamed ? JSON.stringify(event) : data, event.type);
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
    this.ctx.usage = usage !== undefined ? coreUsage(usage) : estimateUsage(this.ctx, this.ctx.forwarding.streamedChars);
    this.completed?.(this.observer);
  }
}
