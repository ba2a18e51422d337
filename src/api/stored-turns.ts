// The Responses API's turns as the gateway keeps them (responses.store):
// a turn sent to a backend is stored as in progress and registered as
// running (so GET shows it and POST …/cancel reaches it, on any replica);
// its end replaces it: the complete response with the conversation a later
// turn continues from, or, when it failed or was cancelled, the response so
// marked. When the gateway keeps no turns, a native backend keeps them, and
// the ids it gives are remembered with the owner they were relayed to, so
// only that owner continues from one. Nothing here ever fails the client's
// request.
import type { Context } from '../pipeline/context';
import type { ResponseObject, StoredItem } from '../protocols/responses';
import { inputItems } from '../protocols/responses';
import { responseObject } from '../protocols/responses/output';
import { continueFrom, ownerOf, relayedTo, type ResponseState, type RunningHandle } from '../responses-store';
import type { KeptTurn, ResponseKeeper, ResponsesExchange } from '../proxy/exchanges/responses';
import type { Reply } from '../proxy/reply';

export class StoredTurns implements ResponseKeeper {
  constructor(readonly state: ResponseState, readonly reply: Reply) {}

  get keeps(): boolean {
    return this.state.keeps;
  }

  continueFrom(ctx: Context, responseId: string): Promise<StoredItem[]> {
    return continueFrom(this.state.store, ownerOf(ctx.principal!), responseId);
  }

  /** `previous_response_id` for a native backend that keeps the turns: an id relayed to the caller's owner, else a 404. */
  relayedFrom(ctx: Context, responseId: string): Promise<void> {
    return relayedTo(this.state, ownerOf(ctx.principal!), responseId);
  }

  issued(ctx: Context, responseId: string): void {
    void this.state.remember(responseId, ownerOf(ctx.principal!), ctx.id);
  }

  begin(ctx: Context, exchange: ResponsesExchange): KeptTurn | undefined {
    if (!this.state.keeps) return undefined;
    return new RunningTurn(this, ctx, exchange);
  }
}

/** One turn from the backend's first attempt to its end; the running handle a cancel reaches. */
class RunningTurn implements KeptTurn, RunningHandle {
  private readonly owner: string;
  private readonly input: StoredItem[];
  private readonly started: ResponseObject;
  private ended = false;

  constructor(private readonly turns: StoredTurns, private readonly ctx: Context, private readonly exchange: ResponsesExchange) {
    this.owner = ownerOf(ctx.principal!);
    this.input = inputItems(exchange.turn.request);
    this.started = responseObject(exchange.meta(ctx), 'in_progress', { output: [] });
    turns.state.running.add(exchange.turn.id, this);
    this.save(this.started, []);
    // Closed without its end: failed (as the failure events said, when the stream got that far).
    ctx.res.once('close', () => this.end(this.asItStands('failed')));
  }

  completed(response: ResponseObject): void {
    this.end(response, [...(this.exchange.turn.history ?? []), ...this.input, ...(response.output as StoredItem[])]);
  }

  /** Another request asked to stop it: the backend is let go, the client gets the response as cancelled, and it is stored so. */
  cancel(): void {
    const cancelled = this.asItStands('cancelled');
    if (!this.end(cancelled)) return;
    const { ctx } = this;
    ctx.forwarding.call?.abandon();
    if (!ctx.res.headersSent) return this.turns.reply.json(ctx, JSON.stringify(cancelled));
    // A stream ends with the event a Responses client knows as a last word, carrying the cancelled response.
    const seq = ctx.forwarding.stream?.lastSequence ?? 0;
    this.turns.reply.endStream(ctx, `event: response.incomplete\ndata: ${JSON.stringify({ type: 'response.incomplete', sequence_number: seq + 1, response: cancelled })}\n\n`);
  }

  /** The response with this status and its output so far (a translated stream's items, closed as incomplete). */
  private asItStands(status: 'failed' | 'cancelled'): ResponseObject {
    const partial = this.ctx.forwarding.stream?.partial?.();
    if (status === 'failed' && partial?.response !== undefined) return partial.response as ResponseObject;
    return { ...this.started, status: status as ResponseObject['status'], output: (partial?.output ?? []) as ResponseObject['output'] };
  }

  /** Its end, once; false when it had ended already. */
  private end(response: ResponseObject, history: StoredItem[] = []): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.turns.state.running.remove(this.exchange.turn.id);
    this.save(response, history);
    return true;
  }

  private save(response: ResponseObject, history: StoredItem[]): void {
    void this.turns.state.save(this.exchange.turn.id, { owner: this.owner, response, input: this.input, history }, this.ctx.id);
  }
}
