// The operator's config file, as a schema. Unknown keys are errors so a typo
// never silently turns a policy off. Cross-references (a route's upstream, a
// key's org) are checked in `crossCheck`, each problem with its path, on what
// is valid even when the rest is not (`salvageConfig`), so one round reports all.
import { z } from 'zod';
import { affinitySchema, engineMetricsSchema, healthSchema, scoringSchema } from './fleet-schema';
import { intLike, sizeLike } from './values';
import { mcpAccessSchema, mcpLimitsSchema, mcpSchema } from './mcp-schema';
import { pricingSchema } from './pricing-schema';
import { endpointLimitsSchema } from './endpoint-limits-schema';
import { adminSchema, redisSchema, responsesSchema, sha256Digest, spendSchema, telemetrySchema } from './services-schema';

export { MAX_MCP_LIMITS, MCP_SERVER_NAME, mcpAccessSchema, mcpLimitSchema, mcpLimitsSchema, mcpSchema } from './mcp-schema';
export { adminSchema, redisSchema, responsesSchema, spendSchema, telemetrySchema, tracesSchema, type TracesConfig } from './services-schema';

/**
 * A key's or an org's limits. The core's own is `concurrency` (requests in
 * flight at once, src/admission); plugins declare theirs (the rate-limit
 * plugin: requests, tokens, windowSeconds), checked by the plugin registry.
 */
export const limitsSchema = z.looseObject({
  concurrency: intLike(1, 1_000_000).optional(),
});
export type Limits = z.infer<typeof limitsSchema>;

/** In-flight limits and the wait queue in front of them (src/admission). */
export const admissionSchema = z.strictObject({
  /** Longest a request over an in-flight limit waits for a slot; 0 refuses it at once. */
  queueTimeoutMs: intLike(0, 600_000).default(10_000),
  /** Most requests waiting on one limit, per replica; 0 refuses at once. */
  queueMax: intLike(0, 100_000).default(100),
  /** How long a lease outlives a replica that died holding it (refreshed every third of it while the request runs). */
  leaseMs: intLike(300, 3_600_000).default(30_000),
  /** Requests in flight at once for every key whose limits set no concurrency of its own. */
  keyConcurrency: intLike(1, 1_000_000).optional(),
}).prefault({});

const serverSchema = z.strictObject({
  host: z.string().min(1).default('127.0.0.1'),
  port: intLike(0, 65535).default(8080),
  bodyLimit: sizeLike.default(1024 * 1024),
  drainSeconds: intLike(0, 3600).default(30),
  /** Worker processes behind the one listening socket; auto: one per CPU the process may run on. */
  workers: z.union([z.literal('auto'), intLike(1, 1024)]).default(1),
  /** A client must send its headers within this, and its whole request (body included) within requestTimeoutMs. */
  headersTimeoutMs: intLike(1_000, 600_000).default(10_000),
  requestTimeoutMs: intLike(1_000, 3_600_000).default(30_000),
  /** A client that leaves a stream unread this long is ended; meanwhile the backend waits, and no backend timer runs. */
  clientStallMs: intLike(100, 3_600_000).default(60_000),
  /** A Messages stream whose backend has been silent this long gets a `ping` event, as Anthropic's API sends one. */
  streamPingMs: intLike(100, 3_600_000).default(10_000),
  metrics: z.strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: intLike(0, 65535).default(9464),
    token: z.string().min(1).optional(),
  }).prefault({}),
}).prefault({});

/** Where a plugin may add fields to the config: keys, orgs, a key's or org's `limits`, routes, upstreams. */
export type FieldPoint = 'keys' | 'orgs' | 'limits' | 'routes' | 'upstreams';

// Keys, orgs, routes and upstreams are open to the fields plugins declare
// (PluginDefinition.fields): the registry checks every field the core does
// not know against them, and names any that nobody declared.
export const keySchema = z.looseObject({
  id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1-64 letters, digits, dot, dash or underscore'),
  sha256: sha256Digest,
  org: z.string().min(1).optional(),
  /** The team the key belongs to (teams.<name>): its models and budgets apply too; the team's org must be the key's. */
  team: z.string().min(1).optional(),
  models: z.array(z.string().min(1)).optional(),
  limits: limitsSchema.optional(),
  /** The key may name its end users (docs/teams.md#end-users): each request's user field, or this header when the operator names one. */
  endUsers: z.strictObject({
    header: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'must be a header name of 1-64 letters, digits or dashes').transform((h) => h.toLowerCase()).optional(),
  }).optional(),
  /** Order in a full queue for a concurrency limit: high first; low is shed first. */
  priority: z.enum(['high', 'normal', 'low']).optional(),
  /** The MCP servers and tools this key may use (docs/mcp.md); none: its org's, and without those none. */
  mcp: mcpAccessSchema.optional(),
});

export const orgShape = z.looseObject({ models: z.array(z.string().min(1)).optional(), limits: limitsSchema.optional(), mcp: mcpAccessSchema.optional() });
export const orgSchema = orgShape.nullable().transform((o) => o ?? {});

/** A team's name: what a key's `team` names, a store key and a metrics label carry. */
export const TEAM_NAME = /^[A-Za-z0-9._-]{1,64}$/;
export const teamName = z.string().regex(TEAM_NAME, 'must be 1-64 letters, digits, dot, dash or underscore');

/** A team: keys of one org that share an allow-list and budgets (docs/teams.md). Its `limits` take the fields plugins add to limits. */
export const teamSchema = z.strictObject({
  org: z.string().min(1),
  models: z.array(z.string().min(1)).optional(),
  limits: limitsSchema.extend({ concurrency: z.never({ error: 'a team has no in-flight limit: set concurrency on its keys or its org' }).optional() }).optional(),
});

const backendUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

export const upstreamSchema = z.looseObject({
  url: backendUrl.optional(),
  /** A fleet: several endpoints serving the same models; `url` is the one-endpoint form. */
  endpoints: z.array(z.strictObject({ url: backendUrl, weight: intLike(1, 1000).default(1) })).min(1).optional(),
  picker: z.enum(['least_inflight', 'round_robin', 'affinity', 'scored']).default('least_inflight'),
  /** picker affinity: requests with the same value of `header` go to the same endpoint while it stays under loadFactor times its share. */
  affinity: affinitySchema.optional(),
  /** Each endpoint's engine metrics (queue, running, KV cache), scraped in the background; `scored` needs them. */
  engineMetrics: engineMetricsSchema.optional(),
  scoring: scoringSchema,
  health: healthSchema,
  /** Timeouts that tell silence from slowness, each defaulting to timeoutMs. */
  timeouts: z.strictObject({
    connectMs: intLike(1, 3_600_000).optional(),
    firstByteMs: intLike(1, 3_600_000).optional(),
    firstEventMs: intLike(1, 3_600_000).optional(),
    idleMs: intLike(1, 3_600_000).optional(),
    /** The whole request, every attempt and the stream included; none by default. */
    totalMs: intLike(1, 86_400_000).optional(),
  }).prefault({}),
  /** Active checks, optional: a GET of `path` on each endpoint every `intervalMs` (vLLM serves /health). */
  healthCheck: z.strictObject({ path: z.string().regex(/^\//, 'must start with /'), intervalMs: intLike(100, 3_600_000).default(5_000) }).optional(),
  /** Further attempts on other endpoints while nothing has reached the client. */
  retry: z.strictObject({
    attempts: intLike(0, 10).default(1),
    /** Retries in flight at most this share of the pool's requests in flight (always 3). */
    budget: z.number().min(0).max(1).default(0.2),
    /** No new attempt starts once the request is this old (ms; default: the upstream's timeoutMs). */
    deadlineMs: intLike(1, 3_600_000).optional(),
    /** Before a retry on the same endpoint (no other in rotation): backoffMs doubling per retry, up to maxBackoffMs, with jitter. */
    backoffMs: intLike(0, 60_000).default(100),
    maxBackoffMs: intLike(0, 600_000).default(2_000),
    /** The longest Retry-After (on a 429 or 503) waited out before the same endpoint is tried again, when no other can answer. */
    maxRetryAfterWaitMs: intLike(0, 600_000).default(5_000),
  }).prefault({}),
  format: z.enum(['openai', 'native', 'demo']).default('openai'),
  headers: z.record(z.string(), z.string()).default({}),
  timeoutMs: intLike(1, 3_600_000).default(60_000),
  maxSockets: intLike(1, 65_536).default(256),
  /** The largest JSON answer held to reshape it (b64_json images are the large ones). */
  maxAnswerBytes: sizeLike.default(32 * 1024 ** 2),
  /** The largest single server-sent event: a backend that never ends an event cannot grow memory without bound. */
  maxEventBytes: sizeLike.default(16 * 1024 ** 2),
  /** Message forms accepted on routes to this upstream, unless a route says otherwise. */
  dialect: z.enum(['interface', 'openai']).optional(),
  /**
   * The client APIs the backend serves itself: a request in one of them is
   * relayed as sent (model renamed); one in another is translated to chat
   * completions and back.
   */
  apis: z.array(z.enum(['chat', 'responses', 'messages'])).min(1).default(['chat']),
  /** Requests in flight to this upstream at once, across replicas (src/admission). */
  maxInFlight: intLike(1, 1_000_000).optional(),
  /** gen_ai.provider.name on its attempt spans (docs/tracing.md): default openai for format openai, else the upstream's name. */
  provider: z.string().min(1).max(64).optional(),
});

/** What a request's body is: never refused or dropped by name. */
const CORE_FIELDS = ['model', 'messages', 'prompt', 'stream', 'model_params'];
const fieldName = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be a request field name such as store or top_k')
  .refine((name) => !CORE_FIELDS.includes(name), { message: `must not be one of ${CORE_FIELDS.join(', ')}: a request without it is not a request` });

/** The endpoints whose requests are texts to read, with nothing generated (docs/endpoints.md). */
export const INPUT_ENDPOINTS = ['embeddings', 'rerank', 'score', 'moderations'] as const;
/** The audio endpoints: speech to text (an uploaded file) and text to speech (docs/endpoints.md#audio). */
export const AUDIO_ENDPOINTS = ['transcriptions', 'translations', 'speech'] as const;
/** The API endpoints a route serves: chat completions, image generations, the input endpoints and audio. */
const endpointSchema = z.enum(['chat', 'images', ...INPUT_ENDPOINTS, ...AUDIO_ENDPOINTS]);
/** Every endpoint, in the order /v1/models lists them. */
export const ENDPOINTS = endpointSchema.options;
const versionSchema = z.enum(['v1', 'v2']);

export const routeSchema = z.looseObject({
  model: z.string().min(1),
  upstream: z.string().min(1),
  upstreamModel: z.string().min(1).optional(),
  endpoints: z.array(endpointSchema).min(1).default(['chat', 'images']),
  versions: z.array(versionSchema).min(1).default(['v1', 'v2']),
  advertise: z.array(z.string().min(1)).optional(),
  dialect: z.enum(['interface', 'openai']).optional(),
  /**
   * Responses and Messages requests to a backend that serves only chat: tools
   * only the protocol's own provider runs (web_search, code execution, …) are
   * dropped (default, named in x-sluice-dropped) or refused with a 400 naming them.
   */
  hostedTools: z.enum(['drop', 'refuse']).optional(),
  /** Exact model ids tried in order when this route's backends cannot answer before anything reached the client. */
  fallbacks: z.array(z.string().min(1)).max(8).optional(),
  /** Backend error codes of a 4xx that also go on to the fallbacks (e.g. context_length_exceeded to a larger-context model). */
  failoverOn: z.array(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be an error code such as context_length_exceeded')).optional(),
  /** A stream cut or stalled after content was sent continues on the first fallback that declares assistantPrefix. */
  continueOnFailure: z.boolean().optional(),
  /** This route's backends continue a final assistant message (vLLM: continue_final_message); params are added to such a request's body. */
  assistantPrefix: z.strictObject({ params: z.record(z.string(), z.unknown()).default({}) }).optional(),
  /** Requests in flight on this route (model) at once, across replicas (src/admission). */
  maxInFlight: intLike(1, 1_000_000).optional(),
  /** Request fields (top level or in model_params) this route refuses with a 400, or drops before forwarding. */
  fields: z.strictObject({ refuse: z.array(fieldName).default([]), drop: z.array(fieldName).default([]) }).optional(),
});

// A pass-through path: /v1/ or /v2/, then segments of unreserved characters (no "." or ".."
// segment), optionally ending in /* for every path below it. The same characters are all
// a request's path may hold to match, so nothing a backend would decode or resolve differently passes.
export const PASSTHROUGH_SEGMENT = '(?!\\.{1,2}(?:/|$))[A-Za-z0-9._~-]+';
const passthroughPath = new RegExp(`^/v[12](?:(?:/${PASSTHROUGH_SEGMENT})+(?:/\\*)?|/\\*)$`);

export const PASSTHROUGH_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** A route that passes another endpoint of a backend through unchanged (see docs/passthrough.md). */
export const passthroughSchema = z.strictObject({
  path: z.string().regex(passthroughPath, 'must start with /v1/ or /v2/, then path segments of letters, digits, ".", "_", "~" or "-" (no "." or ".." segment), optionally ending in /* for every path below it'),
  upstream: z.string().min(1),
  methods: z.array(z.enum(PASSTHROUGH_METHODS)).min(1).default(['POST']),
  /** The model the allow-list checks when a request names none (no JSON body, or no "model" in it). */
  model: z.string().min(1).max(256).optional(),
  /** Largest request body; default server.bodyLimit. Bodies passed unread (multipart) count too. */
  bodyLimit: sizeLike.optional(),
});

/** Each plugin entry: a name (or a module path) plus the plugin's own settings. */
export const pluginEntrySchema = z.looseObject({
  name: z.string().min(1),
  module: z.string().min(1).optional(),
});

export const configSchema = z.strictObject({
  server: serverSchema,
  redis: redisSchema.optional(),
  admission: admissionSchema,
  responses: responsesSchema,
  admin: adminSchema.optional(),
  keys: z.array(keySchema).default([]),
  orgs: z.record(z.string(), orgSchema).default({}),
  // The names are checked in crossCheck, where the problem can say what a name may be.
  teams: z.record(z.string(), teamSchema).default({}),
  upstreams: z.record(z.string(), upstreamSchema).default({}),
  routes: z.array(routeSchema).default([]),
  passthrough: z.array(passthroughSchema).default([]),
  mcp: mcpSchema.optional(),
  plugins: z.array(pluginEntrySchema).default([]),
  pricing: pricingSchema,
  /** What one request of an input endpoint may carry (docs/endpoints.md). */
  endpointLimits: endpointLimitsSchema,
  spend: spendSchema,
  telemetry: telemetrySchema,
});

export type GatewayConfig = z.infer<typeof configSchema>;
export type KeyConfig = GatewayConfig['keys'][number];
export type TeamConfig = z.infer<typeof teamSchema>;
export type AdminConfig = NonNullable<GatewayConfig['admin']>;
export type UpstreamConfig = z.infer<typeof upstreamSchema>;
export type RouteConfig = GatewayConfig['routes'][number];
export type Endpoint = z.infer<typeof endpointSchema>;
/** The endpoints whose requests are texts to read, not a conversation or a prompt (docs/endpoints.md). */
export type InputEndpoint = (typeof INPUT_ENDPOINTS)[number];
/** Transcriptions, translations (an audio upload) and speech (text in, audio out). */
export type AudioEndpoint = (typeof AUDIO_ENDPOINTS)[number];
export type Version = z.infer<typeof versionSchema>;
export type PluginEntry = GatewayConfig['plugins'][number];
export type PassthroughConfig = GatewayConfig['passthrough'][number];
export type McpConfig = z.infer<typeof mcpSchema>;
export type { McpServerConfig, McpHttpServerConfig, McpStdioServerConfig } from './mcp-schema';
export type McpAccessConfig = z.infer<typeof mcpAccessSchema>;
export type McpLimitsConfig = z.infer<typeof mcpLimitsSchema>;
export type McpOAuthConfig = NonNullable<McpConfig['oauth']>;

/**
 * A config as far as it is valid, for the cross-checks of one that failed the
 * schema: each list item and named entry with the fields that pass on their
 * own; undefined where nothing does (a whole section undefined when it is not
 * even a list or a map). A valid config is one.
 */
export interface ConfigView {
  redis?: GatewayConfig['redis'];
  admin?: GatewayConfig['admin'];
  keys?: ReadonlyArray<Partial<KeyConfig> | undefined>;
  orgs?: Readonly<Record<string, GatewayConfig['orgs'][string] | undefined>>;
  teams?: Readonly<Record<string, Partial<TeamConfig> | undefined>>;
  upstreams?: Readonly<Record<string, Partial<UpstreamConfig> | undefined>>;
  routes?: ReadonlyArray<Partial<RouteConfig> | undefined>;
  passthrough?: ReadonlyArray<Partial<PassthroughConfig> | undefined>;
  /** The MCP servers' names: a key's lists, and what an access token's scopes grant, are checked against them (an entry that failed the schema is still a name). */
  mcp?: { servers?: Readonly<Record<string, unknown>>; oauth?: { scopes?: Readonly<Record<string, McpAccessConfig | undefined>> } };
  plugins?: ReadonlyArray<PluginEntry | undefined>;
  /** The price list's entries (a plugin that spends dollars needs some). */
  pricing?: readonly unknown[];
}
