// Request and answer over node:cluster's IPC channel, either way: a worker asks
// the primary, or the primary asks a worker. Each side registers a handler per
// channel; a request resolves with the handler's return value, rejects with
// its error's message, or rejects after its timeout (a peer that died never
// answers). Messages carry a marker, so other users of the same channel
// (prom-client, rate-limiter-flexible) pass untouched.
//
//   // primary
//   handlers.set('queue.acquire', async (body, worker) => ...);
//   const peer = new IpcPeer(workerPort(worker), handlers);
//   // worker
//   const toPrimary = new IpcPeer(processPort(), handlers);
//   const answer = await toPrimary.request('queue.acquire', { key: 'k' });
import type { Worker } from 'node:cluster';

/** What a handler gets: the request's body and the id of the worker at the other end (0: the primary). */
export type IpcHandler = (body: unknown, from: number) => unknown;

/** The transport under a peer: node:cluster's worker object on the primary's side, `process` on a worker's. */
export interface IpcPort {
  /** The id of the process at the other end: a worker's id, or 0 for the primary. */
  readonly peer: number;
  send(message: unknown, sent: (err: Error | null) => void): void;
  onMessage(listener: (message: unknown) => void): void;
}

const MARK = 'sluice-ipc';
export const DEFAULT_TIMEOUT_MS = 5_000;

interface Envelope {
  mark: typeof MARK;
  id: number;
  /** Present on a request. */
  channel?: string;
  body?: unknown;
  /** Present on an answer that failed. */
  error?: string;
  answer?: boolean;
}

const isEnvelope = (m: unknown): m is Envelope => typeof m === 'object' && m !== null && (m as Envelope).mark === MARK;

interface Pending { resolve(value: unknown): void; reject(err: Error): void; timer: NodeJS.Timeout }

export class IpcPeer {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly port: IpcPort, private readonly handlers: ReadonlyMap<string, IpcHandler>) {
    port.onMessage((m) => { if (isEnvelope(m)) this.receive(m); });
  }

  request<T = unknown>(channel: string, body: unknown, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const id = this.nextId++;
      const timer = setTimeout(() => this.settle(id, new Error(`no answer on ${channel} within ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.port.send({ mark: MARK, id, channel, body } satisfies Envelope, (err) => { if (err) this.settle(id, err); });
    });
  }

  /** Fails every request still waiting (the other end is gone). */
  close(why: string): void {
    for (const id of [...this.pending.keys()]) this.settle(id, new Error(why));
  }

  private settle(id: number, err: Error | undefined, value?: unknown): void {
    const p = this.pending.get(id);
    if (p === undefined) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (err) p.reject(err); else p.resolve(value);
  }

  private receive(m: Envelope): void {
    if (m.answer) return this.settle(m.id, m.error === undefined ? undefined : new Error(m.error), m.body);
    const reply = (answer: Omit<Envelope, 'mark' | 'id' | 'answer'>) => this.port.send({ mark: MARK, id: m.id, answer: true, ...answer }, () => undefined);
    const handler = this.handlers.get(m.channel ?? '');
    if (handler === undefined) return reply({ error: `nothing handles ${m.channel}` });
    Promise.resolve()
      .then(() => handler(m.body, this.port.peer))
      .then((body) => reply({ body }), (err: unknown) => reply({ error: err instanceof Error ? err.message : String(err) }));
  }
}

/** The primary's end of one worker's channel. */
export const workerPort = (worker: Worker): IpcPort => ({
  peer: worker.id,
  send: (message, sent) => {
    if (!worker.isConnected()) return sent(new Error(`worker ${worker.id} is not connected`));
    worker.send(message as object, undefined, (err: Error | null) => sent(err));
  },
  onMessage: (listener) => { worker.on('message', listener); },
});

/** A worker's end of its channel to the primary. */
export const processPort = (): IpcPort => ({
  peer: 0,
  send: (message, sent) => {
    if (process.send === undefined || !process.connected) return sent(new Error('not connected to the primary'));
    process.send(message, undefined, undefined, (err: Error | null) => sent(err));
  },
  onMessage: (listener) => { process.on('message', listener); },
});
