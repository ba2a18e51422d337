// What the primary asks its workers, over src/cluster/ipc.ts. The primary
// owns the config: it reads and checks the file, then hands each worker the
// same text, at its start (a restarted worker too) and on every reload.
export const CHANNELS = {
  /** { text, file } → { url }: build the gateway from this config and listen. */
  start: 'sluice.start',
  /** { text, file } → true: swap to this config for new requests. */
  reload: 'sluice.reload',
  /** → true: drain (server.drainSeconds), then exit 0. */
  stop: 'sluice.stop',
  /** → the worker's metrics, as prom-client's getMetricsAsJSON() gives them. */
  metrics: 'sluice.metrics',
} as const;

export interface ConfigText {
  text: string;
  /** The file it came from: plugin modules resolve against its folder. */
  file: string;
}

export interface Started {
  url: string;
}

/** A worker could not start: its message is already the line for stderr (a config's problems, a port in use). */
export class WorkerStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerStartError';
  }
}
