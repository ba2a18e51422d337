// A worker's runtime keys (server.workers above 1): whatever the primary
// holds (src/keys/primary-keys.ts), polled for while the config has an
// `admin` section. A worker starts serving once it has the first answer (or
// after PRIMARY_TIMEOUT_MS without one), so a key made before it started
// answers there too.
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load';
import type { WorkerLink } from '../contract/plugin';
import { PRIMARY_TIMEOUT_MS } from '../worker-link/tick-batcher';
import { RuntimeKeys } from './runtime-keys';
import type { KeySource } from './host';
import { KEYS_CHANNEL, KEYS_POLL_MS, type KeysSnapshot } from './primary-keys';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export class ClusterKeys implements KeySource {
  readonly keys = new RuntimeKeys();
  /** The primary's version this worker holds; -1: none yet. */
  private version = -1;
  private on = false;
  private polling: Promise<void> | undefined;
  private closed = false;
  private failing = false;

  constructor(private readonly link: WorkerLink, private readonly logger: Logger) {}

  async apply({ config }: LoadedConfig): Promise<void> {
    this.keys.teams.applyConfig(config);
    this.on = config.admin !== undefined;
    if (!this.on) {
      this.keys.replace([], []);
      this.version = -1;
      return;
    }
    if (this.polling !== undefined) return;
    let first!: () => void;
    const answered = new Promise<void>((resolve) => { first = resolve; });
    this.polling = this.poll(first).finally(() => { this.polling = undefined; });
    await Promise.race([answered, pause(PRIMARY_TIMEOUT_MS)]);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private async poll(answered: () => void): Promise<void> {
    while (!this.closed && this.on) {
      try {
        const snapshot = await this.link.request<KeysSnapshot | null>(KEYS_CHANNEL, this.version, KEYS_POLL_MS + PRIMARY_TIMEOUT_MS);
        if (snapshot !== null && this.on) {
          this.keys.replace(snapshot.keys, snapshot.teams);
          this.version = snapshot.version;
        }
        this.failing = false;
        answered();
      } catch (err) {
        if (!this.failing) this.logger.warn({ err: (err as Error).message }, 'runtime keys: the primary does not answer; the last keys it sent stay in force');
        this.failing = true;
        await pause(PRIMARY_TIMEOUT_MS);
      }
    }
  }
}
