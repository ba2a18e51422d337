// The plugin contract. A plugin declares a name, a schema for its settings and
// a `create` that returns hooks from a closed list of phases:
//
//   onRequest       before anything reaches a backend; throw a GatewayError to refuse
//   onResponseHead  once, before the response head is written (success or error)
//   onEvent         each streamed event, synchronously: observe, rewrite or drop it
//   onFinish        always, once: success, error or client abort; sees usage and outcome
//   close           when the config that created the plugin is retired
//
// Example (plugins/limits is a complete one):
//   export const plugin: PluginDefinition<{ max: number }> = {
//     name: 'max-messages', schema: z.strictObject({ max: z.number() }),
//     create: ({ max }) => ({ onRequest(ctx) { if ((ctx.chat?.messages.length ?? 0) > max) throw new GatewayError(...) } }),
//   };
import type { z } from 'zod';
import type { Registry } from 'prom-client';
import type { RedisClient } from '../redis/client';
import type { Logger } from 'pino';
import type { Principal } from '../auth/keys';
import type { Endpoint, GatewayConfig, Version } from '../config/schema';
import type { Route } from '../routing/routes';
import type { ChatRequest } from '../api/chat-request';
import type { ImageRequest } from '../api/image-request';
import type { GatewayError, Reason } from '../errors';

export const PHASES = ['onRequest', 'onResponseHead', 'onEvent', 'onFinish', 'close'] as const;
export type Phase = (typeof PHASES)[number];

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** True when the backend reported none and the gateway estimated it. */
  estimated: boolean;
}

export interface Timings {
  /** ms from request start to the backend's response head. */
  upstreamFirstByte?: number;
  /** ms from request start to the first event written to the client. */
  firstEvent?: number;
}

export interface RequestContext {
  readonly id: string;
  /** performance.now() at arrival. */
  readonly startedAt: number;
  readonly version: Version;
  readonly endpoint: Endpoint | 'models';
  principal?: Principal;
  /** The client's model id, once the body is valid. */
  model?: string;
  route?: Route;
  chat?: ChatRequest;
  image?: ImageRequest;
  stream: boolean;
  usage?: Usage;
  readonly timings: Timings;
  error?: GatewayError;
  /** Adds a header to the response, whether it ends in success or error. */
  setHeader(name: string, value: string): void;
  /** Per-plugin scratch space, keyed by plugin name. */
  readonly state: Map<string, unknown>;
}

export interface ResponseHead {
  status: number;
  stream: boolean;
}

export interface Outcome {
  /** HTTP status sent, the error's status for a stream that failed midway, 499 for a client abort. */
  status: number;
  reason: Reason | null;
  aborted: boolean;
  durationMs: number;
}

export type Awaitable<T> = T | Promise<T>;

export interface PluginHooks {
  onRequest?(ctx: RequestContext): Awaitable<void>;
  onResponseHead?(ctx: RequestContext, head: ResponseHead): void;
  /** Returns the event data to send instead, null to drop it, undefined to keep it. */
  onEvent?(ctx: RequestContext, data: string): string | null | undefined;
  onFinish?(ctx: RequestContext, outcome: Outcome): Awaitable<void>;
  close?(): Awaitable<void>;
}

/**
 * Process-wide services that outlive a config reload. The composition root
 * (src/gateway.ts) creates them; plugins use what is there and must register
 * each Prometheus metric only once per registry (reloads create plugins anew).
 */
export interface Services {
  /** Prometheus registry served on the metrics listener. */
  metrics?: Registry;
  /** The Redis connection (single server or cluster), when the config names `redis`. */
  redis?: RedisClient;
  [name: string]: unknown;
}

export interface PluginEnv {
  /** The whole validated config: keys and orgs carry policy some plugins need. */
  config: GatewayConfig;
  logger: Logger;
  services: Services;
}

export interface PluginDefinition<Settings = unknown> {
  name: string;
  /** Validates the plugin's entry in `plugins:` (without `name` and `module`). */
  schema: z.ZodType<Settings>;
  create(settings: Settings, env: PluginEnv): Awaitable<PluginHooks>;
}
