// The sampling decision is made before any span exists, as the SDK's
// ParentBased(TraceIdRatioBased) would make it: a request that is not
// sampled gets no trace; a sampled root's span carries the very trace id the
// ratio was tried on; a parent's flag is followed, or with parentBased off
// the ratio is tried on the parent's trace id.
import type { IncomingMessage } from 'node:http';
import pino from 'pino';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { configSchema } from '../../../src/config/schema';
import { createTracing, type Tracing } from '../../../src/tracing/tracing';

const tracingWith = (sampler: { ratio: number; parentBased?: boolean }): Tracing =>
  createTracing(configSchema.parse({ telemetry: { traces: { endpoint: 'http://127.0.0.1:1/v1/traces', sampler } } }), { env: {}, file: 'test.yaml', logger: pino({ level: 'silent' }) })!;

const request = (traceparent?: string) => ({ method: 'POST', headers: traceparent === undefined ? {} : { traceparent } }) as unknown as IncomingMessage;
const ctx = { id: 'r', protocol: 'chat' as const };
const passes = (ratio: number, traceId: string) => new TraceIdRatioBasedSampler(ratio).shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;

describe('sampling up front', () => {
  const made: Tracing[] = [];
  const make = (sampler: { ratio: number; parentBased?: boolean }) => { const t = tracingWith(sampler); made.push(t); return t; };
  afterAll(async () => { await Promise.all(made.map((t) => t.close())); });

  it('a root at a ratio: about that share traced, each with the trace id the ratio passed', () => {
    const tracing = make({ ratio: 0.25 });
    const traced = Array.from({ length: 2000 }, () => tracing.start(ctx, request(), '/v1/chat/completions')).filter((t) => t !== undefined);
    expect(traced.length).toBeGreaterThan(350);
    expect(traced.length).toBeLessThan(650);
    expect(traced.every((t) => passes(0.25, t!.traceId))).toBe(true);
    expect(new Set(traced.map((t) => t!.traceId)).size).toBe(traced.length);
  });

  it('ratio 0 and 1: nobody, everybody', () => {
    expect(make({ ratio: 0 }).start(ctx, request(), '/r')).toBeUndefined();
    expect(make({ ratio: 1 }).start(ctx, request(), '/r')).toBeDefined();
  });

  it('parent-based: the parent\'s flag, whatever the ratio', () => {
    const tracing = make({ ratio: 0 });
    const id = '4bf92f3577b34da6a3ce929d0e0e4736';
    expect(tracing.start(ctx, request(`00-${id}-00f067aa0ba902b7-01`), '/r')?.traceId).toBe(id);
    expect(make({ ratio: 1 }).start(ctx, request(`00-${id}-00f067aa0ba902b7-00`), '/r')).toBeUndefined();
    // A traceparent that is not one is no parent: the request is a root.
    expect(make({ ratio: 1 }).start(ctx, request('00-nonsense'), '/r')?.traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it('not parent-based: the ratio on the parent\'s trace id', () => {
    const tracing = make({ ratio: 0.5, parentBased: false });
    const ids = Array.from({ length: 64 }, (_, i) => `${i.toString(16).padStart(2, '0')}${'7'.repeat(22)}${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}`);
    for (const id of ids) {
      const t = tracing.start(ctx, request(`00-${id}-00f067aa0ba902b7-01`), '/r');
      expect(t === undefined ? false : t.traceId === id).toBe(passes(0.5, id));
    }
  });
});
