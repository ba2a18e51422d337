// One upstream = a fleet of endpoints (one, or several with weights), each an
// undici Pool of keep-alive connections, built when the config loads. A
// request goes to the endpoint the picker chooses among those in rotation
// for its model (when none is, a fallback model or the endpoint most likely
// to have recovered: fleet/ejection-decision.ts); while nothing has reached
// the client, a failed attempt may go again (fleet.ts,
// fleet/retry-decision.ts). Per request the backend gets exactly the headers
// it may see: the configured upstream headers, content type, accept and
// x-request-id. The client's Authorization, cookies and
// hop-by-hop headers never reach a backend, because they are never copied.
import { Pool } from 'undici';
import type { UpstreamConfig } from '../config/schema';
import type { Context } from '../pipeline/context';
import type { Pipeline } from '../pipeline/pipeline';
import type { Format } from './formats/format';
import { nativeFormat } from './formats/native';
import { openaiFormat } from './formats/openai';
import { Member } from '../fleet/member';
import { FleetHealth } from '../fleet/fleet-health';
import { createPicker } from '../fleet/create-picker';
import type { PickRequest } from '../fleet/picker';
import { startEngineRouting } from '../fleet/engine-routing';
import type { ScoredMetrics } from '../fleet/scored-metrics';
import { startHealthChecks } from '../fleet/health-check';
import { startEjectionProbes } from '../fleet/ejection-probe';
import { decideOutOfRotation } from '../fleet/ejection-decision';
import { RetryBudget } from '../fleet/retry-budget';
import type { FleetMetrics } from '../fleet/metrics';
import { outOfRotation, upstreamTimeout } from './status';
import type { Reply } from './reply';
import { Fleet, type Backend } from './endpoint-attempts';

export interface Upstream {
  name: string;
  format: Format;
  /** Sends the request body to `path` under the upstream's URL; the answer goes to the client through `reply`, read by `format` (default: the upstream's). */
  forward(ctx: Context, path: string, body: string | Buffer, format?: Format): void;
  /** The client protocols the backend serves itself (`apis`). */
  readonly apis: readonly string[];
  close(): Promise<void>;
}

/** Idle keep-alive connections are closed before a typical server's own idle timeout (Node's is 5 s). */
export const KEEP_ALIVE_MS = 4_000;

/** What an upstream takes from beyond its own config: its endpoints, the server's stream settings, and model labels. */
export interface UpstreamSetup {
  members: ReadonlyArray<{ url: string; weight: number }>;
  clientStallMs: number;
  streamPingMs: number;
  /** The metrics label of a model name sent upstream (bounded by the config). */
  modelLabel: (model: string) => string;
}

export function createUpstream(name: string, config: UpstreamConfig & UpstreamSetup, pipeline: Pipeline, reply: Reply, metrics: FleetMetrics, engineMetrics: ScoredMetrics): Upstream {
  const connection = {
    keepAliveTimeout: KEEP_ALIVE_MS,
    // The call's own timer bounds the wait for the head and each silence after it (to the millisecond).
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: config.timeouts.connectMs ?? config.timeoutMs },
  };
  const backends: Backend[] = config.members.map((m, i) => {
    const url = new URL(m.url);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    return { member: new Member(m.url, m.weight, i), origin: url.origin, host: url.hostname, port, base: url.pathname.replace(/\/+$/, ''), pool: new Pool(url.origin, { ...connection, connections: config.maxSockets }) };
  });
  const members = backends.map((b) => b.member);
  const health = new FleetHealth(members, config.health, config.modelLabel);
  metrics.watch(name, members);
  const headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const stopChecks = config.healthCheck
    ? startHealthChecks(health, config.healthCheck, headers, Math.min(config.timeoutMs, config.healthCheck.intervalMs), (m) => metrics.ejected(name, m.shown, '', 'check'))
    : undefined;
  const probeMs = config.health.probeIntervalMs;
  const stopProbes = probeMs > 0
    ? startEjectionProbes(health, probeMs, headers, Math.min(config.timeoutMs, probeMs), (m) => `${backends[m.index].origin}${backends[m.index].base}/models`)
    : undefined;
  const engines = config.engineMetrics && startEngineRouting(name, members, config.engineMetrics, config.scoring, engineMetrics);
  const format = config.format === 'openai' ? openaiFormat : nativeFormat;
  const t = config.timeouts;
  const fleet = new Fleet({
    name, backends, health, budget: new RetryBudget(config.retry.budget), metrics, pipeline, reply, headers, connection,
    provider: config.provider ?? (config.format === 'openai' ? 'openai' : name), pickerName: config.picker,
    // The config check made sure a scored picker has engine metrics to read.
    picker: createPicker(members, config, () => engines!.picker()),
    call: {
      upstream: name, format, timeoutMs: config.timeoutMs, maxAnswerBytes: config.maxAnswerBytes, maxEventBytes: config.maxEventBytes,
      firstByteMs: t.firstByteMs ?? config.timeoutMs, firstEventMs: t.firstEventMs ?? config.timeoutMs, idleMs: t.idleMs ?? config.timeoutMs,
      clientStallMs: config.clientStallMs, streamPingMs: config.streamPingMs,
    },
    retry: { ...config.retry, deadlineMs: config.retry.deadlineMs ?? config.timeoutMs },
  });
  const affinityHeader = config.picker === 'affinity' ? config.affinity?.header : undefined;

  /** The request's total deadline: whatever it has reached by then, it ends with upstream_timeout, with no fallback or continuation. */
  const endAtDeadline = (ctx: Context, totalMs: number): void => {
    const f = ctx.forwarding;
    f.deadline = true;
    const timer = setTimeout(() => {
      reply.fail(ctx, upstreamTimeout(name, f.streaming ? 'stream' : 'head'), true);
    }, Math.max(0, totalMs - ctx.elapsed()));
    ctx.res.once('close', () => clearTimeout(timer));
  };

  /** The request's affinity key: the named header's value, when the picker is affinity and the client sent one. */
  const keyOf = (ctx: Context): string | undefined => {
    if (affinityHeader === undefined) return undefined;
    const value = ctx.res.req.headers[affinityHeader];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };

  /**
   * No endpoint is in rotation for the model (fleet/ejection-decision.ts):
   * while the backend asks to wait, its 429; else a fallback model when the
   * route has one the request may take, and when none, the endpoint most
   * likely to have recovered. Undefined when the request went elsewhere.
   */
  const outOfRotationPick = (ctx: Context, request: PickRequest, now: number): Backend | undefined => {
    const choice = decideOutOfRotation(health.standings(request.model, now), now);
    if (choice.kind === 'wait') return void reply.fail(ctx, outOfRotation(name, 'rate_limited', choice.backInMs));
    if (!ctx.res.headersSent && ctx.forwarding.fallbacks?.tryNext(outOfRotation(name, choice.cause, choice.backInMs))) return undefined;
    request.reason = 'panic';
    return backends[choice.index];
  };

  return {
    name,
    format,
    apis: config.apis,
    forward(ctx, path, body, requestFormat = format) {
      if (t.totalMs !== undefined && !ctx.forwarding.deadline) endAtDeadline(ctx, t.totalMs);
      const now = Date.now();
      // The model and messages as sent upstream (what health is kept by, and prefix affinity hashes), and the affinity key.
      const request: PickRequest = { model: ctx.route?.upstreamModel ?? ctx.model ?? '', messages: ctx.chat?.messages, key: keyOf(ctx), reason: undefined };
      const b = fleet.pick(now, request) ?? outOfRotationPick(ctx, request, now);
      if (b !== undefined) fleet.send(ctx, path, body, b, { tried: new Set(), count: 0, request, format: requestFormat }, false, false);
    },
    close: async () => {
      stopChecks?.();
      stopProbes?.();
      await engines?.stop();
      await Promise.all(backends.map((b) => b.pool.destroy()));
    },
  };
}
