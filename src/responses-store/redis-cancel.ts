// Cancels between replicas through Redis pub/sub: every replica subscribes
// to `<prefix>responses:cancel` on a connection of its own (a subscribed
// connection can do nothing else), and a cancel publishes the response id
// there; the replica that runs it stops it. The subscription is made again
// whenever the connection comes back, so a Redis restart loses none but the
// cancels sent while it was down (whose publish failed: a 503 to the caller).
import { closeRedisClient } from '../redis/client';
import type { RedisClient } from '../contract/types';
import type { CancelRelay, RunningResponses } from './running';
import { storeUnavailable } from './store';

export const cancelChannel = (prefix: string): string => `${prefix}responses:cancel`;

export class RedisCancelRelay implements CancelRelay {
  private readonly sub: RedisClient;
  private readonly channel: string;
  /** Resolves once the first subscription is made (a test waits on it; requests need not). */
  readonly subscribed: Promise<void>;

  constructor(private readonly client: RedisClient, prefix: string, running: RunningResponses) {
    this.channel = cancelChannel(prefix);
    this.sub = client.duplicate();
    let first: () => void;
    this.subscribed = new Promise((resolve) => { first = resolve; });
    const subscribe = (): void => void this.sub.subscribe(this.channel).then(() => first(), () => undefined);
    this.sub.on('ready', subscribe);
    // The gateway's own connection logs an outage; this one would only repeat it.
    this.sub.on('error', () => undefined);
    this.sub.on('message', (channel: string, id: string) => { if (channel === this.channel) running.cancelHere(id); });
  }

  async publish(id: string): Promise<void> {
    try {
      await this.client.publish(this.channel, id);
    } catch (err) {
      throw storeUnavailable(err);
    }
  }

  async close(): Promise<void> {
    await closeRedisClient(this.sub);
  }
}
