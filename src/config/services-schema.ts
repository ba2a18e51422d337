// The config's sections for the services beside the request path: Redis,
// the admin API, the Responses API's stored turns, spend records, and
// OpenTelemetry traces.
import { z } from 'zod';
import { intLike, sizeLike } from './values';

export const redisSchema = z.strictObject({
  url: z.string().regex(/^rediss?:\/\//, 'must start with redis:// or rediss://').optional(),
  nodes: z.array(z.string().regex(/^[^:]+:\d+$/, 'must be host:port')).min(1).optional(),
  prefix: z.string().default('sluice:'),
  failMode: z.enum(['open', 'closed']).default('open'),
  commandTimeoutMs: intLike(10, 10_000).default(100),
});

export const sha256Digest = z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be the 64 hex digits of the key\'s SHA-256 digest').transform((s) => s.toLowerCase());

/**
 * The admin API (docs/admin.md): keys made, changed and revoked at runtime,
 * on a listener of its own, for callers with an admin key. With this section
 * the gateway honours runtime keys (kept in Redis when `redis` is set, else
 * in `keysFile`); `port` opens the listener (0: none in this process, as on a
 * replica that only honours the keys another one serves).
 */
export const adminSchema = z.strictObject({
  host: z.string().min(1).default('127.0.0.1'),
  port: intLike(0, 65535).default(0),
  /** SHA-256 digests of the admin keys; none of them may be a gateway key's. */
  keys: z.array(sha256Digest).default([]),
  /** SHA-256 digests of admin keys that may only read (GET): the spend, the keys, the teams. */
  readKeys: z.array(sha256Digest).default([]),
  /** Without Redis: the runtime keys' file (relative to the config's folder); default <config file>.keys.json. */
  keysFile: z.string().min(1).optional(),
});

/**
 * What the gateway keeps of Responses API turns (`store: true`, OpenAI's
 * default), for `previous_response_id` and GET /v1/responses/{id}: in Redis
 * when the config names it, else in memory (the primary's, with workers).
 */
export const responsesSchema = z.strictObject({
  /** false: nothing is kept; `previous_response_id` and the stored-response endpoints find nothing. */
  store: z.boolean().default(true),
  /** How long a stored response is kept after its last write: 30 days, as OpenAI keeps them. */
  ttlSeconds: intLike(1, 3650 * 86_400).default(2_592_000),
  /** Largest stored response (its JSON: the response, its input and the history a later turn continues from); a larger one is not kept. */
  maxResponseBytes: sizeLike.default(4 * 1024 ** 2),
  /** Without Redis: all stored responses of this replica together; the least recently used go first. */
  memoryMaxBytes: sizeLike.default(64 * 1024 ** 2),
  /** Most responses one owner (an org, or a key without one) keeps, remembered ids of relayed ones included; the owner's oldest go first. */
  ownerMaxResponses: intLike(1, 10_000_000).default(10_000),
  /** Most bytes one owner's responses take, in Redis as in memory; the owner's oldest go first. */
  ownerMaxBytes: sizeLike.default(64 * 1024 ** 2),
}).refine((r) => r.memoryMaxBytes >= r.maxResponseBytes, { message: 'must be at least maxResponseBytes (one response at the cap must fit)', path: ['memoryMaxBytes'] })
  .refine((r) => r.ownerMaxBytes >= r.maxResponseBytes, { message: 'must be at least maxResponseBytes (one response at the cap must fit)', path: ['ownerMaxBytes'] })
  .prefault({});

/**
 * What the gateway keeps of each finished request for chargeback
 * (src/spend, docs/spend.md): per-day sums per key, per org and in all, and
 * a bounded log of usage records. In Redis when the config names it, else in
 * memory (the primary's, with workers).
 */
export const spendSchema = z.strictObject({
  /** false: nothing is recorded; the spend API and the export find nothing. */
  record: z.boolean().default(true),
  /** How long a day's sums are kept after the day ends. */
  retentionDays: intLike(1, 3660).default(400),
  /** Usage records kept, at most (Redis: XADD MAXLEN ~, so a little more; memory: exactly). */
  streamMaxLen: intLike(1, 100_000_000).default(100_000),
}).prefault({});

/**
 * OpenTelemetry traces (src/tracing, docs/tracing.md): off while absent. A
 * field left out falls back to the standard OTEL_* variable, then its default.
 */
export const tracesSchema = z.strictObject({
  /** The OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces. */
  endpoint: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  protocol: z.enum(['http/protobuf', 'http/json']).optional(),
  /** Sent with every export (a collector's or vendor's token, written as ${VAR}). */
  headers: z.record(z.string(), z.string()).optional(),
  /** One export's longest wait on the collector. */
  timeoutMs: intLike(1, 600_000).optional(),
  /** Root requests sampled at `ratio`; with parentBased, a request carrying a traceparent follows its sampled flag. */
  sampler: z.strictObject({ ratio: z.number().min(0).max(1).optional(), parentBased: z.boolean().optional() }).optional(),
  /** Resource attributes of every span (service.name defaults to sluice). */
  resource: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  /** Ended spans waiting for export, at most; past it new ones are dropped and counted. */
  maxQueueSize: intLike(1, 1_000_000).optional(),
  /** The longest a span waits before its batch goes out. */
  scheduledDelayMs: intLike(1, 600_000).optional(),
  /** Prompt and completion text on the server span, as forwarded and as sent back (after the content filter and every rewrite). */
  captureContent: z.boolean().default(false),
});

export const telemetrySchema = z.strictObject({ traces: tracesSchema.optional() }).prefault({});
export type TracesConfig = z.infer<typeof tracesSchema>;
