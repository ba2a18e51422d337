// The plugin contract. A plugin declares a name, its stage, a schema for its
// settings and a `create` that returns hooks from a closed list of phases:
//
//   onRequest       before anything reaches a backend; throw a GatewayError to refuse
//                   (a transform-stage plugin rewrites the request's texts here, through rewriteTexts)
//   outputRules     once the request hooks have run: the rules the answer's text is checked against as it flows
//   onResponseHead  once, before the response head is written (success or error)
//   onEvent         each streamed event, synchronously: observe, rewrite or drop it
//   onStreamEnd     once at the end of a stream, before [DONE]: may add a last event
//   onResponseBody  a JSON answer, synchronously: observe or replace it
//   onFinish        always, once: success, error or client abort; sees usage and outcome
//   close           when the config that created the plugin is retired
//
// and, for an MCP tool call (docs/mcp.md), the same stages on the call:
//
//   onToolCall       before the call reaches its server: refuse by throwing, or rewrite its arguments
//   toolResultRules  the rules the result's text is checked against (the output rules of a tool call)
//   onToolResult     the server's result, whole, once the rules have run: observe, replace or refuse it
//
// Example (plugins/limits is a complete one; docs/plugins.md shows one with state):
//   export const plugin: PluginDefinition<{ max: number }> = {
//     name: 'max-messages', stage: 'validate', schema: z.strictObject({ max: z.number() }),
//     create: ({ max }) => ({ onRequest(ctx) { if ((ctx.chat?.messages.length ?? 0) > max) throw new GatewayError(...) } }),
//   };
//
// The contract is what third parties build on, so it stays a leaf: it imports
// only the leaves below it (the request types, the config schema's types and
// the error catalogue), never the core that runs it (checked in CI).
import type { z } from 'zod';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { AudioRequest, ChatRequest, ClientProtocol, ImageRequest, InputsRequest, PriceList, Principal, RedisClient, Route, TeamLookup, Usage } from './types';
import type { ConfigView, Endpoint, FieldPoint, GatewayConfig, Version } from '../config/schema';
import type { GatewayError, Reason } from './errors';
import type { AdmissionService } from './admission';
import type { ToolCallContext, ToolResult } from './tool-hooks';
import type { OutputMatch, OutputRules, OutputScan } from './output-rules';

export type { FieldPoint, PriceList, Usage };
export type { ToolCallContext, ToolResult };
export type { OutputMatch, OutputRules, OutputScan };

export const PHASES = ['onRequest', 'outputRules', 'onResponseHead', 'onEvent', 'onStreamEnd', 'onResponseBody', 'onFinish', 'close', 'onToolCall', 'toolResultRules', 'onToolResult'] as const;
export type Phase = (typeof PHASES)[number];

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
  /** An API endpoint, the model list, or a pass-through route (whose answers no answer hook sees: they pass as bytes). */
  readonly endpoint: Endpoint | 'models' | 'passthrough';
  /** The API the client speaks on this request: chat completions (also images and the rest), responses or messages. */
  readonly protocol: ClientProtocol;
  principal?: Principal;
  /**
   * The end user the request is for, when its key may name them (its entry's
   * `endUsers`) and the request does: checked at the edge (src/request/end-user.ts),
   * set before the request hooks run. Never a metrics label.
   */
  readonly user?: string;
  /** The client's model id, once the body is valid. */
  model?: string;
  route?: Route;
  chat?: ChatRequest;
  image?: ImageRequest;
  /** An embeddings, rerank, score or moderations request (docs/endpoints.md). */
  inputs?: InputsRequest;
  /** A transcription, translation or speech request (docs/endpoints.md#audio). */
  audio?: AudioRequest;
  stream: boolean;
  /** Every piece of text the request forwards to a backend (messages in every form, tools, prompts, string parameters); empty when none. */
  texts: readonly string[];
  usage?: Usage;
  /**
   * What the request cost in dollars, from its usage and the config's
   * `pricing`: set at the finish, before onFinish runs; undefined when no
   * price names the model.
   */
  cost?: number;
  readonly timings: Timings;
  error?: GatewayError;
  /**
   * Aborted once the response has closed, for any reason: a hook that waits
   * (a queue for a free slot) stops waiting when the client leaves.
   */
  readonly signal: AbortSignal;
  /** Adds a header to the response, whether it ends in success or error. */
  setHeader(name: string, value: string): void;
  /**
   * Caps the answer's output at `tokens` a choice: the request reaches its
   * backend with its protocol's cap (max_tokens or max_completion_tokens; a
   * Responses request's max_output_tokens) set to it, and the answer may end
   * for length. Only lowers a cap the request names; no effect on an image
   * request. For an admit plugin whose budget must hold (rate-limit's hard budgets).
   */
  capOutput(tokens: number): void;
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

/**
 * One streamed event, shared by every plugin's onEvent: its data as it will
 * be sent, and that data parsed as JSON once for all of them (undefined when
 * it is not JSON). Read it inside the hook; never hold it after returning.
 */
export interface StreamEvent {
  readonly data: string;
  readonly json: unknown;
}

/** What onEvent decides: undefined keeps the event, null drops it, a string or an object replaces its data. */
export type EventVerdict = string | object | null | undefined;

/**
 * The hooks a plugin returns, all optional. `State` is the plugin's own
 * per-request state: `state()` makes a fresh one for each request, and every
 * hook of that request gets the same one as its last argument.
 *
 * What each hook may change:
 *   onRequest       refuse by throwing a GatewayError; a transform-stage plugin rewrites the request's
 *                   texts through rewriteTexts (what it changes reaches the backend, and every later stage reads it)
 *   outputRules     nothing: it returns the rules the answer's text must pass (synchronously), or undefined
 *   onResponseHead  response headers, through ctx.setHeader
 *   onEvent         the event: keep, drop or replace it (synchronously)
 *   onStreamEnd     adds one last event before [DONE] (synchronously)
 *   onResponseBody  a JSON answer: return a replacement object, or undefined to keep it (synchronously)
 *   (onEvent, onStreamEnd and onResponseBody never run on pass-through routes: their answers pass as bytes)
 *   onFinish        nothing of the response: it has been sent; observe usage and outcome
 *   onToolCall      refuse the call by throwing a GatewayError (the client gets a JSON-RPC error with its
 *                   message, the server nothing); rewrite the arguments through call.rewriteArguments
 *   toolResultRules nothing: returns the rules every text of the result must pass (synchronously), or undefined
 *   onToolResult    the result: return a replacement, or undefined to keep it; throw a GatewayError to refuse it
 */
export interface PluginHooks<State = undefined> {
  state?(): State;
  onRequest?(ctx: RequestContext, state: State): Awaitable<void>;
  outputRules?(ctx: RequestContext, state: State): OutputRules | undefined;
  onResponseHead?(ctx: RequestContext, head: ResponseHead, state: State): void;
  onEvent?(ctx: RequestContext, event: StreamEvent, state: State): EventVerdict;
  onStreamEnd?(ctx: RequestContext, state: State): string | object | undefined;
  onResponseBody?(ctx: RequestContext, body: Record<string, unknown>, state: State): Record<string, unknown> | undefined;
  onFinish?(ctx: RequestContext, outcome: Outcome, state: State): Awaitable<void>;
  close?(): Awaitable<void>;
  onToolCall?(call: ToolCallContext, state: State): Awaitable<void>;
  toolResultRules?(call: ToolCallContext, state: State): OutputRules | undefined;
  onToolResult?(call: ToolCallContext, result: ToolResult, state: State): Awaitable<ToolResult | undefined>;
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
  /** Present in each worker when server.workers is above 1: the way to the primary, where state exact across workers lives. */
  cluster?: WorkerLink;
  /** The teams in force (the config's and the admin API's), kept current as they change. */
  teams?: TeamLookup;
  /** With Redis: where the shared limits are decided, noted by every user of Redis, so an outage is logged once. */
  storeHealth?: StoreHealthNotes;
}

/** Noted once per request whose shared limits were decided (see Services.storeHealth). */
export interface StoreHealthNotes {
  /** In the shared store, in-process because it could not answer (failMode open), or not at all (failMode closed). */
  decided(inProcess: boolean, unavailable: boolean): void;
}

/** A worker's link to the primary (server.workers above 1). */
export interface WorkerLink {
  /** This worker's id, from 1; a restarted worker gets a new one. */
  readonly worker: number;
  /** Asks the primary's handler for `channel` (see PluginDefinition.setUpPrimary); rejects on its error or after timeoutMs. */
  request<T = unknown>(channel: string, body: unknown, timeoutMs?: number): Promise<T>;
}

/** What the primary offers a plugin's setUpPrimary. */
export interface PrimaryLink {
  /** Answers the workers' requests on `channel` (one handler per channel); `worker` is the asking worker's id. */
  handle(channel: string, handler: (body: unknown, worker: number) => Awaitable<unknown>): void;
  /** Calls `listener` with a worker's id once it has exited (a crash, SIGKILL or a stop): state it held can be let go at once. */
  onWorkerExit(listener: (worker: number) => void): void;
}

export interface PluginEnv<Kept = undefined> {
  /** The whole validated config: keys and orgs carry policy some plugins need (a plugin's own fields among them). */
  config: GatewayConfig;
  logger: Logger;
  services: Services;
  /** In-flight limits and the wait queue of this config: slots a plugin holds are given back when the request finishes. */
  admission: AdmissionService;
  /** The config's prices (`pricing`), compiled: what a plugin needs to price a request before it runs. */
  prices: PriceList;
  /** What the plugin's `keep` made for this process (the same object across reloads). */
  kept: Kept;
}


/**
 * When a plugin's hooks run, whatever the config's order: transform plugins
 * (rewrite the request: redaction, defaults) first, so every later stage reads
 * the rewritten request; then every validate plugin (refuses bad input, spends
 * nothing) before any admit plugin (budgets, quotas), and observe plugins
 * (metrics, audit) last. The config's order only breaks ties within a stage.
 */
export const STAGES = ['transform', 'validate', 'admit', 'observe'] as const;
export type Stage = (typeof STAGES)[number];

export interface PluginDefinition<Settings = unknown, State = any, Kept = any> {
  name: string;
  /** Default: admit. */
  stage?: Stage;
  /** Runs even when the config leaves it out, with its default settings (the interface's own limits do). */
  required?: boolean;
  /** Validates the plugin's entry in `plugins:` (without `name` and `module`). */
  schema: z.ZodType<Settings>;
  /**
   * Fields the plugin adds to keys, orgs, limits, routes or upstreams (e.g.
   * `limits: { requests: ..., tokens: ... }`), each a zod schema. The registry
   * checks them at load with their paths, refuses a field nobody declared, and
   * one whose plugin is not in the chain. The plugin reads them from env.config.
   */
  fields?: Readonly<Partial<Record<FieldPoint, Readonly<Record<string, z.ZodType>>>>>;
  /** The error reasons the plugin raises, with their status: added to the catalogue when it is registered. */
  reasons?: Readonly<Record<string, number>>;
  /** The plugin counts every request on the metrics registry: without such a plugin in the chain, a metrics listener counts nothing (a warning at start). */
  recordsRequests?: boolean;
  /**
   * Makes what the plugin keeps for the whole process (limiters whose counts
   * must survive a reload, say): called once per process, the result handed
   * to every create() as env.kept.
   */
  keep?(services: Services): Kept;
  /**
   * Problems in the whole config that concern this plugin, each with its path;
   * called for every registered plugin, `active` telling whether the config runs it
   * (so a plugin can say its settings elsewhere would be silently off without it).
   */
  check?(config: ConfigView, active: boolean): string[];
  create(settings: Settings, env: PluginEnv<Kept>): Awaitable<PluginHooks<State>>;
  /**
   * With server.workers above 1, runs once in the primary before the first
   * worker starts (a plugin a reload brings in: before that reload reaches the
   * workers). State that must stay exact across workers lives here; workers
   * reach it through services.cluster.
   */
  setUpPrimary?(primary: PrimaryLink): void;
}
