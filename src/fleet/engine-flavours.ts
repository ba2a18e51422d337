// What each model server calls its queue, its running requests and its KV
// cache use on /metrics. Alternatives are read in order (a renamed metric
// keeps older servers working); several series of one name (data-parallel
// engines, several served models) add up, and the fullest KV cache counts.
import type { EngineMetricsConfig } from '../config/fleet-schema';
import { readSeries } from './prom-text';

export interface EngineReading {
  /** Requests queued in the engine, not yet started. */
  waiting: number;
  /** Requests the engine is running. */
  running: number;
  /** KV-cache use from 0 to 1; undefined when the server does not report it. */
  kvCacheUsage?: number;
}

interface Names { waiting: readonly string[]; running: readonly string[]; kvCache: readonly string[] }

export const FLAVOUR_NAMES: Record<EngineMetricsConfig['flavour'], Names> = {
  // kv_cache_usage_perc since vLLM V1; gpu_cache_usage_perc before. Both are fractions (1 = full).
  vllm: { waiting: ['vllm:num_requests_waiting'], running: ['vllm:num_requests_running'], kvCache: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'] },
  // Newer SGLang spells the prefix sglang_ (multiprocess collector); token_usage is the KV pool's used fraction.
  sglang: {
    waiting: ['sglang:num_queue_reqs', 'sglang_num_queue_reqs'],
    running: ['sglang:num_running_reqs', 'sglang_num_running_reqs'],
    kvCache: ['sglang:token_usage', 'sglang_token_usage'],
  },
  // TGI reports no KV-cache use.
  tgi: { waiting: ['tgi_queue_size'], running: ['tgi_batch_current_size'], kvCache: [] },
  // llama.cpp's server (--metrics): deferred requests wait for a free slot; recent builds dropped kv_cache_usage_ratio.
  llamacpp: { waiting: ['llamacpp:requests_deferred'], running: ['llamacpp:requests_processing'], kvCache: ['llamacpp:kv_cache_usage_ratio'] },
};

const first = (series: Map<string, number[]>, names: readonly string[]): number[] | undefined => {
  for (const n of names) { const v = series.get(n); if (v) return v; }
  return undefined;
};

function count(values: number[] | undefined, what: string): number {
  if (values === undefined) throw new Error(`no ${what} metric in the exposition (is this the right flavour, with metrics enabled?)`);
  const sum = values.reduce((a, b) => a + b, 0);
  if (!Number.isFinite(sum) || sum < 0) throw new Error(`${what} is not a count: ${sum}`);
  return sum;
}

/** The reading of one exposition; throws when it lacks the queue or running count, or a value makes no sense. */
export function readEngine(text: string, flavour: EngineMetricsConfig['flavour']): EngineReading {
  const names = FLAVOUR_NAMES[flavour];
  const series = readSeries(text, [...names.waiting, ...names.running, ...names.kvCache]);
  const kv = first(series, names.kvCache);
  const kvCacheUsage = kv === undefined ? undefined : Math.max(...kv);
  if (kvCacheUsage !== undefined && !(kvCacheUsage >= 0)) throw new Error(`KV-cache use is not a fraction: ${kvCacheUsage}`);
  return {
    waiting: count(first(series, names.waiting), 'queue'),
    running: count(first(series, names.running), 'running'),
    kvCacheUsage: kvCacheUsage === undefined ? undefined : Math.min(1, kvCacheUsage),
  };
}
