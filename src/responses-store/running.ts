// The responses this process is running, so POST /v1/responses/{id}/cancel
// reaches the request that runs one, wherever it runs: here directly; in
// another replica or worker through a relay (Redis pub/sub, or the primary
// for the workers without Redis), whose far end calls cancelHere.
//
//   running.add(id, { cancel: () => abort.abort() });   // when the response starts
//   running.remove(id);                                  // when it ends, however it ends
//
// Who may cancel is decided before: the cancel endpoint finds the stored
// response under the caller's owner first, so a relay carries only the id.

/** What the request running a response gives the registry. */
export interface RunningHandle {
  /**
   * Stop now: abort the backend request, end the client's answer with the
   * response as it stands and status `cancelled`, and store it so. Called at
   * most once, from any turn of the event loop.
   */
  cancel(): void;
}

/** Carries a cancel to the other processes; each calls cancelHere on its own registry. */
export interface CancelRelay {
  publish(id: string): Promise<void>;
  /** The registry went from no running response to one (the primary's relay polls only while some run). */
  busy?(): void;
  close(): Promise<void>;
}

export class RunningResponses {
  private readonly handles = new Map<string, RunningHandle>();
  private relay: CancelRelay | undefined;

  add(id: string, handle: RunningHandle): void {
    this.handles.set(id, handle);
    if (this.handles.size === 1) this.relay?.busy?.();
  }

  remove(id: string): void {
    this.handles.delete(id);
  }

  get size(): number { return this.handles.size; }

  /** Cancels it if this process runs it; true when it did. */
  cancelHere(id: string): boolean {
    const handle = this.handles.get(id);
    if (handle === undefined) return false;
    this.handles.delete(id);
    handle.cancel();
    return true;
  }

  /** Cancels it here, or asks the other processes to; rejects (`store_unavailable`) when the relay cannot carry it. */
  async cancel(id: string): Promise<void> {
    if (this.cancelHere(id)) return;
    await this.relay?.publish(id);
  }

  /** The relay to the other processes (none: this process is the only one). The one it replaces is closed. */
  async useRelay(relay: CancelRelay | undefined): Promise<void> {
    if (relay === this.relay) return;
    const old = this.relay;
    this.relay = relay;
    if (this.handles.size > 0) relay?.busy?.();
    await old?.close();
  }

  async close(): Promise<void> {
    await this.useRelay(undefined);
  }
}
