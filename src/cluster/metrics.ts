// The machine's metrics (server.workers above 1): the primary's metrics
// listener asks every worker for its registry at each scrape and serves one
// exposition, merged by prom-client's AggregatorRegistry.aggregate: one
// series per name and label set, counters and histograms summed, each gauge
// by its own aggregator (in flight and streams summed, an endpoint's "up" the
// share of workers that have it in rotation, Redis "up" the worst worker's).
// The primary's own process metrics are part of the sum, so process_* and
// nodejs_* describe every process of the gateway.
//
// A worker that exits takes its counts with it; the primary keeps its
// counters and histograms as of the last scrape, so no total ever goes down
// (what it counted after that scrape is lost, never counted twice).
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { MetricsSource } from '../metrics/server';
import type { IpcPeer } from './ipc';
import { CHANNELS } from './protocol';

/** A metric as getMetricsAsJSON() gives it (the fields used here). */
interface MetricJson {
  name: string;
  type: string;
  aggregator: string;
  values: unknown[];
}

/** Where prom-client's own aggregator does not describe the machine: it started with its first process, and its fd limit is not a sum. */
const MACHINE_AGGREGATORS: Record<string, string> = { process_start_time_seconds: 'min', process_max_fds: 'min' };

const SCRAPE_TIMEOUT_MS = 3_000;

export interface WorkerMetricsPeer {
  id: number;
  peer: IpcPeer;
}

export class MachineMetrics implements MetricsSource {
  private retired: MetricJson[] = [];
  private readonly last = new Map<number, MetricJson[]>();

  /** `own`: the primary's registry; `workers`: those running now. */
  constructor(private readonly own: Registry, private readonly workers: () => readonly WorkerMetricsPeer[]) {}

  get contentType(): string {
    return this.own.contentType;
  }

  async metrics(): Promise<string> {
    const answers = await Promise.all(this.workers().map(async ({ id, peer }) => {
      const json = await peer.request<MetricJson[]>(CHANNELS.metrics, null, SCRAPE_TIMEOUT_MS);
      this.last.set(id, json);
      return json;
    }));
    const own = (await this.own.getMetricsAsJSON()) as unknown as MetricJson[];
    // aggregate() takes each name's aggregator from its first occurrence: the primary's comes first.
    for (const m of own) m.aggregator = MACHINE_AGGREGATORS[m.name] ?? m.aggregator;
    return AggregatorRegistry.aggregate([own, this.retired, ...answers]).metrics();
  }

  /** Worker `id` is gone: its counters and histograms stay in the totals as of the last scrape. */
  async retire(id: number): Promise<void> {
    const last = this.last.get(id);
    this.last.delete(id);
    if (last === undefined) return;
    const kept = last.filter((m) => m.type === 'counter' || m.type === 'histogram');
    this.retired = (await AggregatorRegistry.aggregate([this.retired, kept]).getMetricsAsJSON()) as unknown as MetricJson[];
  }
}
