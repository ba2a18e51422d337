// Two ends of an IPC channel in one process, delivering asynchronously and
// by copy, as node:cluster's channel does: the primary's end of a worker's
// channel (its peer is the worker's id) and the worker's end (its peer is 0).
import type { IpcPort } from '../../src/cluster/ipc';

export type TestPort = IpcPort & { up: boolean };

export function portPair(worker = 1): [primaryEnd: TestPort, workerEnd: TestPort] {
  const listeners: Array<Array<(m: unknown) => void>> = [[], []];
  const make = (self: number, other: number, peer: number): TestPort => ({
    up: true,
    peer,
    send(message: unknown, sent: (err: Error | null) => void) {
      if (!this.up) return sent(new Error('channel closed'));
      const copy = JSON.parse(JSON.stringify(message)); // what crosses a channel is a copy
      setImmediate(() => listeners[other].forEach((l) => l(copy)));
      sent(null);
    },
    onMessage(listener: (m: unknown) => void) { listeners[self].push(listener); },
  });
  return [make(0, 1, worker), make(1, 0, 0)];
}
