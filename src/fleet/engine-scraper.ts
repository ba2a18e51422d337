// Scrapes each endpoint's engine metrics in the background: a GET of `path`
// on the endpoint's origin every `intervalMs`, over a connection of its own,
// bounded in time and size. One scrape at a time per endpoint; a failed or
// slow one leaves the last reading to age (and a reading older than the
// staleness bound counts as saturated). Nothing here is on a request's path:
// the picker reads what the last scrape left. stop() ends every timer, scrape
// and connection.
import { Client } from 'undici';
import type { EngineMetricsConfig } from '../config/fleet-schema';
import { readEngine, type EngineReading } from './engine-flavours';
import type { Member } from './member';

/** What the gateway knows of one endpoint's engine. */
export class EngineState {
  waiting = 0;
  running = 0;
  kvCacheUsage?: number;
  /** When the current reading arrived (ms since epoch); 0 before the first. */
  at = 0;
  /** Requests this gateway sent here, ever; and that count when the current reading's scrape began. */
  private sent = 0;
  private sentAtReading = 0;

  /** A request is being sent here. */
  sending(): void { this.sent++; }

  /** Requests sent since the scrape behind the current reading began: not yet in the engine's own counts. */
  get sentSince(): number { return this.sent - this.sentAtReading; }

  /** The count to pass to record() when a scrape begins. */
  mark(): number { return this.sent; }

  record(reading: EngineReading, at: number, sentAtStart: number): void {
    this.waiting = reading.waiting;
    this.running = reading.running;
    this.kvCacheUsage = reading.kvCacheUsage;
    this.at = at;
    this.sentAtReading = sentAtStart;
  }

  /** Whether the reading is at most `staleAfterMs` old. */
  fresh(now: number, staleAfterMs: number): boolean {
    return this.at !== 0 && now - this.at <= staleAfterMs;
  }
}

export interface EngineScraper {
  /** By member index. */
  readonly states: readonly EngineState[];
  readonly staleAfterMs: number;
  stop(): Promise<void>;
}

export const staleAfter = (c: EngineMetricsConfig): number => c.staleAfterMs ?? 4 * c.intervalMs;

/** Starts scraping every member; `scraped` hears each scrape's outcome (for the metrics). */
export function startEngineScraper(members: readonly Member[], config: EngineMetricsConfig, scraped: (m: Member, ok: boolean) => void): EngineScraper {
  const staleAfterMs = staleAfter(config);
  const timeoutMs = config.timeoutMs ?? staleAfterMs;
  const states = members.map(() => new EngineState());
  const clients = members.map((m) => new Client(new URL(m.url).origin, { keepAliveTimeout: 4_000, connect: { timeout: timeoutMs } }));
  const timers: Array<NodeJS.Timeout | undefined> = members.map(() => undefined);
  const inFlight = new Set<AbortController>();
  let running = true;

  const read = async (i: number, signal: AbortSignal): Promise<EngineReading> => {
    const res = await clients[i].request({ path: config.path, method: 'GET', headers: { accept: 'text/plain' }, signal, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    if (res.statusCode !== 200) { await res.body.dump(); throw new Error(`status ${res.statusCode}`); }
    const chunks: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of res.body) {
      bytes += (chunk as Buffer).length;
      if (bytes > config.maxBytes) { res.body.destroy(); throw new Error('exposition too large'); }
      chunks.push(chunk as Buffer);
    }
    return readEngine(Buffer.concat(chunks).toString('utf8'), config.flavour);
  };

  const scrape = async (i: number): Promise<void> => {
    timers[i] = undefined;
    const started = Date.now();
    const mark = states[i].mark();
    const abort = new AbortController();
    inFlight.add(abort);
    const deadline = setTimeout(() => abort.abort(), timeoutMs);
    let ok = false;
    try {
      const reading = await read(i, abort.signal);
      if (running) { states[i].record(reading, Date.now(), mark); ok = true; }
    } catch {
      ok = false; // the reading ages; the picker sees it stale soon enough
    } finally {
      clearTimeout(deadline);
      inFlight.delete(abort);
    }
    if (!running) return;
    scraped(members[i], ok);
    schedule(i, Math.max(0, config.intervalMs - (Date.now() - started)));
  };

  const schedule = (i: number, delay: number): void => {
    const t = setTimeout(() => void scrape(i), delay);
    t.unref();
    timers[i] = t;
  };

  members.forEach((_, i) => schedule(i, 0));
  return {
    states,
    staleAfterMs,
    stop: async () => {
      running = false;
      for (const t of timers) if (t !== undefined) clearTimeout(t);
      for (const a of inFlight) a.abort();
      await Promise.allSettled(clients.map((c) => c.destroy()));
    },
  };
}
