// One JSON line per API request. Ids, names, numbers only: never a prompt, a
// message, a key or a header value.
import type { Logger } from 'pino';
import type { Outcome } from '../pipeline/contract';
import type { Context } from '../pipeline/context';

const round = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : Math.round(ms * 100) / 100);

export function logAccess(logger: Logger, ctx: Context, outcome: Outcome): void {
  if (!logger.isLevelEnabled('info')) return;
  logger.info({
    requestId: ctx.id,
    key: ctx.principal?.id,
    org: ctx.principal?.org ?? undefined,
    endpoint: ctx.endpoint,
    version: ctx.version,
    model: ctx.model,
    upstream: ctx.route?.upstream,
    stream: ctx.stream,
    status: outcome.status,
    reason: outcome.reason ?? undefined,
    durationMs: round(outcome.durationMs),
    upstreamFirstByteMs: round(ctx.timings.upstreamFirstByte),
    firstEventMs: round(ctx.timings.firstEvent),
    tokens: ctx.usage && { prompt: ctx.usage.prompt_tokens, completion: ctx.usage.completion_tokens, estimated: ctx.usage.estimated },
  }, 'request');
}
