// One JSON line per API request. Ids, names, numbers only: never a prompt, a
// message, a key or a header value.
import type { Logger } from 'pino';
import type { Outcome } from '../pipeline/contract';
import type { Context } from '../pipeline/context';

const round = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : Math.round(ms * 100) / 100);

// The model id is the client's own text: clipped, so no client can bloat the log.
const MODEL_MAX_CHARS = 200;
const clip = (text: string | undefined): string | undefined => (text !== undefined && text.length > MODEL_MAX_CHARS ? text.slice(0, MODEL_MAX_CHARS) : text);

/** Why an attempt at the backend failed (connect, timeout, status, stream; the phase it reached; the socket error or HTTP status). */
function upstreamCause(ctx: Context): Record<string, string> | undefined {
  const d = ctx.error?.details;
  return d?.kind === undefined || d.upstream === undefined ? undefined : { kind: d.kind, phase: d.phase, code: d.code };
}

export function logAccess(logger: Logger, ctx: Context, outcome: Outcome): void {
  if (!logger.isLevelEnabled('info')) return;
  logger.info({
    requestId: ctx.id,
    keyId: ctx.principal?.id,
    org: ctx.principal?.org ?? undefined,
    endpoint: ctx.endpoint,
    version: ctx.version,
    model: clip(ctx.model),
    upstream: ctx.route?.upstream,
    stream: ctx.stream,
    status: outcome.status,
    reason: outcome.reason ?? undefined,
    durationMs: round(outcome.durationMs),
    upstreamFirstByteMs: round(ctx.timings.upstreamFirstByte),
    firstEventMs: round(ctx.timings.firstEvent),
    upstreamError: upstreamCause(ctx),
    skippedEvents: ctx.forwarding.skippedEvents || undefined,
    upstreamEndpoint: ctx.forwarding.endpoint,
    attempts: ctx.forwarding.attempts || undefined,
    tokens: ctx.usage && { prompt: ctx.usage.prompt_tokens, completion: ctx.usage.completion_tokens, total: ctx.usage.total_tokens, estimated: ctx.usage.estimated },
  }, 'request');
}
