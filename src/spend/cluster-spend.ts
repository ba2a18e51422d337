// A worker's spend records when the primary keeps them (server.workers above
// 1, no Redis; primary-spend.ts): each batch is one message. Reading is the
// admin API's, which runs in the primary.
import type { WorkerLink } from '../contract/plugin';
import { PRIMARY_TIMEOUT_MS } from '../worker-link/tick-batcher';
import { SPEND_CHANNEL } from './primary-spend';
import type { UsageRecord } from './record';
import type { DayTotals, SpendStore } from './store';

const READ_HERE = 'spend records are read in the primary (the admin listener), not in a worker';

export class ClusterSpendStore implements SpendStore {
  constructor(private readonly link: WorkerLink) {}

  async add(records: readonly UsageRecord[]): Promise<void> {
    await this.link.request(SPEND_CHANNEL, records, PRIMARY_TIMEOUT_MS);
  }

  days(): Promise<DayTotals[]> {
    return Promise.reject(new Error(READ_HERE));
  }

  records(): AsyncIterable<UsageRecord> {
    throw new Error(READ_HERE);
  }
}
