// The parts of an upstream's config that read its model servers: where each
// endpoint serves its engine metrics and in which flavour, and how the
// `scored` picker weighs queue, KV cache and prefix locality. A leaf like
// schema.ts: it imports nothing from the core.
import { z } from 'zod';
import { intLike } from './values';

export const ENGINE_FLAVOURS = ['vllm', 'sglang', 'tgi', 'llamacpp'] as const;

/** Each endpoint's engine metrics, scraped in the background (never on a request's path). */
export const engineMetricsSchema = z.strictObject({
  path: z.string().regex(/^\/[^\s?#]*$/, 'must be a path starting with /').default('/metrics'),
  flavour: z.enum(ENGINE_FLAVOURS).default('vllm'),
  intervalMs: intLike(10, 60_000).default(50),
  /** Older data counts as saturated; default four intervals. */
  staleAfterMs: intLike(20, 600_000).optional(),
  /** One scrape's bound; default the staleness bound. */
  timeoutMs: intLike(5, 60_000).optional(),
  /** The largest exposition read; a bigger one is a failed scrape. */
  maxBytes: intLike(1024, 64 * 1024 ** 2).default(4 * 1024 ** 2),
}).refine((m) => m.staleAfterMs === undefined || m.staleAfterMs > m.intervalMs, { message: 'staleAfterMs must be longer than intervalMs', path: ['staleAfterMs'] });

export type EngineMetricsConfig = z.infer<typeof engineMetricsSchema>;

/** How the `scored` picker filters and ranks endpoints. */
export const scoringSchema = z.strictObject({
  /** Waiting requests (the engine's queue plus what Sluice sent since the last scrape) over this: saturated. */
  queueThreshold: intLike(0, 100_000).default(5),
  /** KV-cache use (0 to 1) over this: saturated. */
  kvCacheThreshold: z.number().min(0).max(1).default(0.8),
  weights: z.strictObject({
    queue: z.number().min(0).max(100).default(2),
    kvCache: z.number().min(0).max(100).default(1),
    prefix: z.number().min(0).max(100).default(3),
  }).prefault({}),
  prefix: z.strictObject({
    /** Characters of the prompt per hashed block. */
    blockChars: intLike(16, 65_536).default(128),
    /** Blocks looked at per request (the prompt beyond them is not matched). */
    maxBlocks: intLike(1, 4096).default(256),
    /** Block hashes remembered per endpoint, least recently used evicted first. */
    entriesPerEndpoint: intLike(1, 10_000_000).default(50_000),
  }).prefault({}),
}).prefault({});

export type ScoringConfig = z.infer<typeof scoringSchema>;

/** picker affinity: the header whose value keeps a conversation on one endpoint, and how far over its share that endpoint may go. */
export const affinitySchema = z.strictObject({
  header: z.string().regex(/^[A-Za-z0-9-]+$/, 'must be a header name').transform((h) => h.toLowerCase()),
  loadFactor: z.number().min(1).max(10).default(1.25),
});

/**
 * Passive health: what keeps failing leaves the rotation for a while. An
 * ejection is bounded well under a minute by default (a backend back after a
 * restart is not kept out for minutes), and an endpoint out for failures is
 * probed every probeIntervalMs, so it returns as soon as it answers.
 */
export const healthSchema = z.strictObject({
  consecutiveFailures: intLike(1, 1000).default(3),
  baseEjectionMs: intLike(100, 3_600_000).default(5_000),
  /** Every ejection's bound, the first one's too. */
  maxEjectionMs: intLike(100, 86_400_000).default(30_000),
  maxEjectedShare: z.number().min(0).max(1).default(0.5),
  maxRetryAfterMs: intLike(0, 3_600_000).default(60_000),
  /** 0: no probes (the endpoint returns with its trial when the ejection ends). */
  probeIntervalMs: intLike(0, 3_600_000).default(1_000),
}).prefault({});
