// One upstream = a fleet of endpoints (one, or several with weights), each an
// undici Pool of keep-alive connections, built when the config loads. A
// request goes to the endpoint the picker chooses among those in rotation;
// while nothing has reached the client, a connect failure, a 5xx or a 429 is
// tried again on another endpoint (at most retry.attempts more). Per request the backend gets exactly the
// headers it may see: the configured upstream headers, content type, accept
// and x-request-id. The client's Authorization, cookies and hop-by-hop
// headers never reach a backend, because they are never copied.
import { Client, Pool, type Dispatcher } from 'undici';
import type { UpstreamConfig } from '../config/schema';
import type { Context } from '../pipeline/context';
import type { Pipeline } from '../pipeline/pipeline';
import type { Format } from './formats/format';
import { nativeFormat } from './formats/native';
import { openaiFormat } from './formats/openai';
import { UpstreamCall, type Attempt, type CallSettings } from './call';
import { Member, recordAttempt, recordRateLimited } from '../fleet/member';
import { createPicker } from '../fleet/create-picker';
import type { PickRequest } from '../fleet/picker';
import { startEngineRouting } from '../fleet/engine-routing';
import type { ScoredMetrics } from '../fleet/scored-metrics';
import { startHealthChecks } from '../fleet/health-check';
import { RetryBudget } from '../fleet/retry-budget';
import type { FleetMetrics } from '../fleet/metrics';
import { GatewayError } from '../errors';
import { upstreamTimeout } from './status';
import type { Reply } from './reply';

export interface Upstream {
  name: string;
  format: Format;
  /** Sends the request body to `path` under the upstream's URL; the answer goes to the client through `reply`, read by `format` (default: the upstream's). */
  forward(ctx: Context, path: string, body: string, format?: Format): void;
  /** The client protocols the backend serves itself (`apis`). */
  readonly apis: readonly string[];
  close(): Promise<void>;
}

/** Idle keep-alive connections are closed before a typical server's own idle timeout (Node's is 5 s). */
export const KEEP_ALIVE_MS = 4_000;

/** An endpoint of the fleet with its connection pool. */
interface Backend {
  member: Member;
  origin: string;
  base: string;
  pool: Pool;
}

export function createUpstream(name: string, config: UpstreamConfig & { members: ReadonlyArray<{ url: string; weight: number }> }, pipeline: Pipeline, reply: Reply, metrics: FleetMetrics, engineMetrics: ScoredMetrics): Upstream {
  const options = {
    keepAliveTimeout: KEEP_ALIVE_MS,
    // The call's own timer bounds the wait for the head and each silence after it (to the millisecond).
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: config.timeouts.connectMs ?? config.timeoutMs },
  };
  const backends: Backend[] = config.members.map((m, i) => {
    const url = new URL(m.url);
    return { member: new Member(m.url, m.weight, i), origin: url.origin, base: url.pathname.replace(/\/+$/, ''), pool: new Pool(url.origin, { ...options, connections: config.maxSockets }) };
  });
  const members = backends.map((b) => b.member);
  const budget = new RetryBudget(config.retry.budget);
  const deadlineMs = config.retry.deadlineMs ?? config.timeoutMs;
  metrics.watch(name, members);
  const stopChecks = config.healthCheck
    ? startHealthChecks(members, config.healthCheck, config.health, Math.min(config.timeoutMs, config.healthCheck.intervalMs), (m) => metrics.ejected(name, m.url, 'check'))
    : undefined;
  const engines = config.engineMetrics && startEngineRouting(name, members, config.engineMetrics, config.scoring, engineMetrics);
  // The config check made sure a scored picker has engine metrics to read.
  const picker = createPicker(members, config, () => engines!.picker());
  const affinityHeader = config.picker === 'affinity' ? config.affinity?.header : undefined;
  const health = config.health;
  /**
   * A retry after a connection died unanswered goes over a connection of its
   * own: the pool's other idle connections to this backend may be dead too.
   */
  const freshConnection = (b: Backend): Dispatcher => {
    const client = new Client(b.origin, options);
    setImmediate(() => void client.close()); // closes once its one request is done
    return client;
  };
  const format = config.format === 'openai' ? openaiFormat : nativeFormat;
  const headers = Object.fromEntries(Object.entries(config.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const t = config.timeouts;
  const settings: CallSettings = {
    upstream: name, format, timeoutMs: config.timeoutMs, maxAnswerBytes: config.maxAnswerBytes, maxEventBytes: config.maxEventBytes,
    firstByteMs: t.firstByteMs ?? config.timeoutMs, firstEventMs: t.firstEventMs ?? config.timeoutMs, idleMs: t.idleMs ?? config.timeoutMs,
  };

  /** The request's total deadline: whatever it has reached by then, it ends with upstream_timeout, with no fallback or continuation. */
  const endAtDeadline = (ctx: Context, totalMs: number): void => {
    const f = ctx.forwarding;
    f.deadline = true;
    const timer = setTimeout(() => {
      f.fallbacks = undefined;
      reply.fail(ctx, upstreamTimeout(name, f.streaming ? 'stream' : 'head'));
    }, Math.max(0, totalMs - ctx.elapsed()));
    ctx.res.once('close', () => clearTimeout(timer));
  };

  /** Equal jitter: half the doubled backoff fixed, half random, so retries of many requests spread out. */
  const backoff = (retries: number): number => {
    const ms = Math.min(config.retry.backoffMs * 2 ** (retries - 1), config.retry.maxBackoffMs);
    return ms / 2 + Math.random() * (ms / 2);
  };

  const inFlight = (): number => members.reduce((sum, m) => sum + m.inflight, 0);

  /**
   * One attempt on one endpoint; `state` holds the endpoints this request
   * already failed on and its attempts here; `budgeted` when it is a retry taken from the budget.
   */
  const send = (ctx: Context, path: string, body: string, b: Backend, state: Tries, fresh: boolean, budgeted = false): void => {
    const { member } = b;
    const now = Date.now();
    if (member.ejectedUntil !== 0 && now >= member.ejectedUntil) member.trialInFlight = true; // half-open: this is its trial
    member.inflight++;
    state.tried.add(member);
    if (!fresh) state.count++; // a dropped idle connection tried again is not a new attempt
    ctx.forwarding.attempts++;
    ctx.forwarding.endpoint = member.url;
    const attempt: Attempt = {
      done(result, rateLimitedMs) {
        member.inflight--;
        if (budgeted) budget.release();
        if (rateLimitedMs !== undefined) {
          if (recordRateLimited(member, rateLimitedMs || undefined, members, health, Date.now())) metrics.ejected(name, member.url, 'rate_limited');
        } else if (recordAttempt(member, result, members, health, Date.now())) {
          metrics.ejected(name, member.url, 'failures');
        }
      },
      retry(why) {
        // Bounded per request (attempts), in time (the deadline covers every attempt) and per pool (the budget).
        if (ctx.closed || state.count > config.retry.attempts || ctx.elapsed() >= deadlineMs) return false;
        const now = Date.now();
        const elsewhere = backendFor(now, state.request, state.tried);
        // Elsewhere if another endpoint is in rotation; else a dropped idle connection goes again on a fresh
        // one at once, and a failure (not a silence) on the same endpoint after a backoff, if it is still in rotation.
        const again = elsewhere === undefined && (why === 'dropped' ? !fresh : why === 'failed' && member.available(now));
        const next = elsewhere ?? (again ? b : undefined);
        const delay = next === b && why === 'failed' ? backoff(state.count) : 0;
        // A dropped idle connection is the pool's own churn, not the backend's load: it spends no budget.
        const budgeted = why !== 'dropped';
        if (next === undefined || ctx.elapsed() + delay >= deadlineMs || (budgeted && !budget.tryRetry(inFlight()))) return false;
        metrics.retried(name, why);
        const go = () => {
          if (!ctx.closed) return send(ctx, path, body, next, state, next === b && why === 'dropped', budgeted);
          if (budgeted) budget.release();
        };
        if (delay === 0) go(); else setTimeout(go, delay);
        return true;
      },
    };
    const call = new UpstreamCall(ctx, settings, pipeline, reply, attempt, state.format);
    ctx.forwarding.call = call;
    (fresh ? freshConnection(b) : b.pool).dispatch({
      path: b.base + path,
      method: 'POST',
      headers: withPassed({ ...headers, 'content-type': 'application/json', accept: ctx.stream ? 'text/event-stream' : 'application/json', 'x-request-id': ctx.id }, ctx, state.format),
      body,
    }, call);
  };

  /** The request's affinity key: the named header's value, when the picker is affinity and the client sent one. */
  const keyOf = (ctx: Context): string | undefined => {
    if (affinityHeader === undefined) return undefined;
    const value = ctx.res.req.headers[affinityHeader];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };

  const backendFor = (now: number, request: PickRequest, tried?: ReadonlySet<Member>): Backend | undefined => {
    const m = picker.pick(members, now, tried, request);
    return m === undefined ? undefined : backends[m.index];
  };

  return {
    name,
    format,
    apis: config.apis,
    forward(ctx, path, body, requestFormat = format) {
      if (t.totalMs !== undefined && !ctx.forwarding.deadline) endAtDeadline(ctx, t.totalMs);
      const now = Date.now();
      // The model and messages as sent upstream (what prefix affinity hashes), and the affinity key.
      const request: PickRequest = { model: ctx.route?.upstreamModel ?? ctx.model ?? '', messages: ctx.chat?.messages, key: keyOf(ctx) };
      const b = backendFor(now, request);
      if (b === undefined) return reply.fail(ctx, unavailable(name, members, now));
      send(ctx, path, body, b, { tried: new Set(), count: 0, request, format: requestFormat }, false);
    },
    close: async () => {
      stopChecks?.();
      await engines?.stop();
      await Promise.all(backends.map((b) => b.pool.destroy()));
    },
  };
}

/** The endpoints one request has tried on this upstream, its attempts here, what the picker knows of it, and its format. */
interface Tries { tried: Set<Member>; count: number; request: PickRequest; format: Format }

/** The backend's headers, with the client's own that the format passes on as sent (a native Messages backend's anthropic-version). */
function withPassed(headers: Record<string, string>, ctx: Context, format: Format): Record<string, string> {
  if (format.passHeaders === undefined) return headers;
  const given = ctx.res.req.headers;
  for (const name of format.passHeaders) {
    const value = given[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

/** Every endpoint is out of rotation: fail fast, and say when the first comes back. */
function unavailable(upstream: string, members: readonly Member[], now: number): GatewayError {
  const back = Math.min(...members.map((m) => m.ejectedUntil));
  const seconds = Math.max(1, Math.ceil((back - now) / 1000));
  return new GatewayError('upstream_unavailable', 'Every backend for this model is out of rotation after repeated failures. Retry after the time in Retry-After.', {
    headers: { 'retry-after': String(seconds) }, details: { kind: 'connect', upstream, phase: 'queue', code: 'ALL_EJECTED' },
  });
}
