// One JSON line per API request. Ids, names, numbers only: never a prompt, a
// message, a key or a header value.
//
// The line is the one pino would write for logger.info({...}, 'request'):
// the same fields in the same order, undefined ones left out, the logger's
// level, time and bindings first and "msg" last, written to the logger's
// own destination, so it sits in the one stream with every other line. It is
// built here by hand because it is written for every request: pino's
// general serializer walked a fresh object of eighteen fields per request,
// about 10 µs of CPU, and allocated what it walked.
import pino, { type Logger } from 'pino';
import type { Outcome } from '../contract/plugin';
import type { Context } from '../pipeline/context';

const round = (ms: number): number => Math.round(ms * 100) / 100;

// The model id is the client's own text: clipped, so no client can bloat the log.
const MODEL_MAX_CHARS = 200;
const clip = (text: string): string => (text.length > MODEL_MAX_CHARS ? text.slice(0, MODEL_MAX_CHARS) : text);

/** JSON.stringify's text for a number (null for NaN and the infinities). */
const num = (n: number): string => (Number.isFinite(n) ? String(n) : 'null');

/** Appends `,"key":value` for the fields that are present, as JSON.stringify would write them. */
class Line {
  text: string;

  constructor(start: string) {
    this.text = start;
  }

  str(key: string, value: string | undefined): void {
    if (value !== undefined) this.text += `,"${key}":${JSON.stringify(value)}`;
  }

  num(key: string, value: number | undefined): void {
    if (value !== undefined) this.text += `,"${key}":${num(value)}`;
  }

  ms(key: string, value: number | undefined): void {
    if (value !== undefined) this.text += `,"${key}":${num(round(value))}`;
  }
}

interface PinoInternals {
  [pino.symbols.chindingsSym]: string;
  [pino.symbols.timeSym]: () => string;
  [pino.symbols.streamSym]: { write(line: string): unknown };
}

/** The access line for `ctx`, without the trailing newline; `bindings` is the logger's (`,"service":"sluice"…`). */
export function accessLine(ctx: Context, outcome: Outcome, time: string, bindings: string): string {
  const l = new Line(`{"level":30${time}${bindings}`);
  l.str('requestId', ctx.id);
  // A sampled request's trace: the line and its spans found from each other.
  l.str('traceId', ctx.trace?.traceId);
  l.str('keyId', ctx.principal?.id);
  l.str('org', ctx.principal?.org ?? undefined);
  l.str('endpoint', ctx.endpoint);
  if (ctx.protocol !== 'chat') l.str('protocol', ctx.protocol);
  l.str('version', ctx.version);
  l.str('model', ctx.model === undefined ? undefined : clip(ctx.model));
  l.str('upstream', ctx.route?.upstream);
  if (ctx.stream !== undefined) l.text += `,"stream":${ctx.stream}`;
  l.num('status', outcome.status);
  l.str('reason', outcome.reason ?? undefined);
  l.ms('durationMs', outcome.durationMs);
  l.ms('upstreamFirstByteMs', ctx.timings.upstreamFirstByte);
  l.ms('firstEventMs', ctx.timings.firstEvent);
  // Why an attempt at the backend failed (connect, timeout, status, stream; the phase it reached; the socket error or HTTP status).
  const d = ctx.error?.details;
  if (d?.kind !== undefined && d.upstream !== undefined) l.text += `,"upstreamError":${JSON.stringify({ kind: d.kind, phase: d.phase, code: d.code })}`;
  l.num('skippedEvents', ctx.forwarding.skippedEvents || undefined);
  // What output rules did to the answer: "mask" (text replaced), "block" (cut there); never what matched.
  l.str('filtered', ctx.forwarding.filtered);
  l.str('upstreamEndpoint', ctx.forwarding.endpoint);
  l.num('attempts', ctx.forwarding.attempts || undefined);
  const u = ctx.usage;
  if (u) l.text += `,"tokens":{"prompt":${num(u.prompt_tokens)},"completion":${num(u.completion_tokens)},"total":${num(u.total_tokens)},"estimated":${u.estimated}}`;
  // Dollars, from the usage and the config's pricing: absent when no price names the model.
  l.num('cost', ctx.cost);
  return `${l.text},"msg":"request"}`;
}

export function logAccess(logger: Logger, ctx: Context, outcome: Outcome): void {
  if (!logger.isLevelEnabled('info')) return;
  const internals = logger as unknown as PinoInternals;
  const line = accessLine(ctx, outcome, internals[pino.symbols.timeSym](), internals[pino.symbols.chindingsSym]);
  internals[pino.symbols.streamSym].write(`${line}\n`);
}
