// The access line is written by hand for speed (src/api/access-log.ts); it
// must be byte for byte the line pino writes for logger.info(fields, 'request').
import { Writable } from 'node:stream';
import pino from 'pino';
import { accessLine, logAccess } from '../../../src/api/access-log';
import type { Context } from '../../../src/pipeline/context';
import type { Outcome } from '../../../src/contract/plugin';

const TIME = ',"time":"2026-11-24T10:00:00.000Z"';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
  const logger = pino({ base: { service: 'sluice', pid: 4242 }, timestamp: () => TIME }, stream);
  return { logger, lines };
}

/** What the access log wrote before, through pino's own serializer: the reference. */
function viaPino(ctx: Context, outcome: Outcome): string {
  const { logger, lines } = capture();
  const round = (ms: number | undefined) => (ms === undefined ? undefined : Math.round(ms * 100) / 100);
  const d = ctx.error?.details;
  logger.info({
    requestId: ctx.id,
    traceId: ctx.trace?.traceId,
    keyId: ctx.principal?.id,
    org: ctx.principal?.org ?? undefined,
    endpoint: ctx.endpoint,
    version: ctx.version,
    model: ctx.model !== undefined && ctx.model.length > 200 ? ctx.model.slice(0, 200) : ctx.model,
    upstream: ctx.route?.upstream,
    stream: ctx.stream,
    status: outcome.status,
    reason: outcome.reason ?? undefined,
    durationMs: round(outcome.durationMs),
    upstreamFirstByteMs: round(ctx.timings.upstreamFirstByte),
    firstEventMs: round(ctx.timings.firstEvent),
    upstreamError: d?.kind === undefined || d.upstream === undefined ? undefined : { kind: d.kind, phase: d.phase, code: d.code },
    skippedEvents: ctx.forwarding.skippedEvents || undefined,
    upstreamEndpoint: ctx.forwarding.endpoint,
    attempts: ctx.forwarding.attempts || undefined,
    tokens: ctx.usage && { prompt: ctx.usage.prompt_tokens, completion: ctx.usage.completion_tokens, total: ctx.usage.total_tokens, estimated: ctx.usage.estimated },
  }, 'request');
  return lines[0];
}

const context = (fields: Record<string, unknown>): Context => ({
  id: 'c0ffee00-0000-4000-8000-000000000000',
  timings: {},
  forwarding: { attempts: 0, skippedEvents: 0 },
  ...fields,
}) as unknown as Context;

const outcome = (status: number, reason: Outcome['reason'], durationMs: number): Outcome => ({ status, reason, aborted: false, durationMs });

const cases: Array<[string, Context, Outcome]> = [
  ['refused before a key was known', context({ endpoint: 'chat', version: 'v1' }), outcome(401, 'unauthorized', 0.123456)],
  ['a JSON answer with usage, traced', context({
    trace: { traceId: '4bf92f3577b34da6a3ce929d0e0e4736' }, principal: { id: 'team-a', org: 'acme' }, endpoint: 'chat', version: 'v2', model: 'gpt-4o', route: { upstream: 'openai' }, stream: false,
    timings: { upstreamFirstByte: 12.3456 }, forwarding: { attempts: 1, skippedEvents: 0, endpoint: 'http://10.0.0.1:8000/v1' },
    usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22, estimated: false },
  }), outcome(200, null, 44.909)],
  ['a stream cut by its backend, with retries and skipped events', context({
    principal: { id: 'k', org: null }, endpoint: 'chat', version: 'v1', model: 'llama', route: { upstream: 'vllm' }, stream: true,
    timings: { upstreamFirstByte: 3, firstEvent: 5.555 }, forwarding: { attempts: 3, skippedEvents: 2, endpoint: 'http://b:1/v1' },
    error: { details: { upstream: 'vllm', kind: 'stream', phase: 'stream', code: 'ECONNRESET' } },
    usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, estimated: true },
  }), outcome(200, 'upstream_error', 1000)],
  ['client text that needs escaping, clipped', context({
    id: 'client "id"\n\u2028', principal: { id: 'k' }, endpoint: 'images', version: 'v1', model: `"quoted" \\ ünïcode ${'x'.repeat(300)}`,
  }), outcome(404, 'model_not_found', 2)],
  ['an error with no upstream named', context({ endpoint: 'chat', version: 'v1', error: { details: { kind: 'connect' } } }), outcome(500, 'internal_error', Number.NaN)],
];

describe('access line', () => {
  it.each(cases)('is pino\'s line, byte for byte: %s', (_name, ctx, outcome) => {
    const { logger } = capture();
    const bindings = (logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
    expect(`${accessLine(ctx, outcome, TIME, bindings)}\n`).toBe(viaPino(ctx, outcome));
  });

  it('goes to the logger\'s own stream with its time and bindings, and not at all below info', () => {
    const { logger, lines } = capture();
    const [, ctx, outcome] = cases[1];
    logAccess(logger, ctx, outcome);
    expect(lines).toEqual([viaPino(ctx, outcome)]);
    logger.level = 'warn';
    logAccess(logger, ctx, outcome);
    expect(lines).toHaveLength(1);
  });
});
