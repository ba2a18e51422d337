// metrics: counts every API request, its latency, tokens and refusals into the
// Prometheus registry the gateway serves on its metrics listener
// (server.metrics). Put it last in the chain: a request it sees in onRequest
// has passed every policy and goes to a backend (sluice_inflight_requests).
//
//   - { name: metrics }
import { z } from 'zod';
import type { PluginDefinition, RequestContext } from '../../src';
import { budgetLabel, kindLabel, modelLabeler, scopeLabel, upstreamLabel } from './labels';
import { recorderFor } from './recorder';

const STATE = 'metrics';
// Bits kept in ctx.state: what this request holds on the gauges, and whether
// it has finished (a hook awaited by an earlier plugin can resume after the
// client left and the finish hooks already ran; it must not count then).
const INFLIGHT = 1;
const STREAMING = 2;
const FINISHED = 4;

const flags = (ctx: RequestContext): number => (ctx.state.get(STATE) as number | undefined) ?? 0;

export const plugin: PluginDefinition<Record<string, never>> = {
  name: 'metrics',
  schema: z.strictObject({}),
  create(_settings, { config, services }) {
    if (services.metrics === undefined) throw new Error('plugin "metrics": the gateway provides no Prometheus registry (services.metrics)');
    const recorder = recorderFor(services.metrics);
    recorder.startAtZero(Object.keys(config.upstreams));
    const { inflight, activeStreams } = recorder.metrics;
    const modelOf = modelLabeler(config);

    return {
      onRequest(ctx) {
        const f = flags(ctx);
        if (f & FINISHED) return;
        ctx.state.set(STATE, f | INFLIGHT);
        inflight.inc();
      },
      onResponseHead(ctx, head) {
        if (!head.stream) return;
        const f = flags(ctx);
        if (f & (FINISHED | STREAMING)) return;
        ctx.state.set(STATE, f | STREAMING);
        activeStreams.inc();
      },
      onFinish(ctx, outcome) {
        const f = flags(ctx);
        if (f & INFLIGHT) inflight.dec();
        if (f & STREAMING) activeStreams.dec();
        ctx.state.set(STATE, FINISHED);

        const model = modelOf(ctx.model);
        const reason = outcome.reason ?? '';
        recorder.request(ctx.endpoint, ctx.version, model, outcome.status, reason);
        recorder.duration(ctx.endpoint, model, ctx.stream, outcome.durationMs / 1000);
        const { upstreamFirstByte, firstEvent } = ctx.timings;
        if (upstreamFirstByte !== undefined && ctx.route !== undefined) recorder.upstreamTtfb(ctx.route.upstream, model, upstreamFirstByte / 1000);
        if (firstEvent !== undefined) recorder.firstEvent(model, firstEvent / 1000);
        if (ctx.usage !== undefined && ctx.principal !== undefined) {
          const { usage, principal } = ctx;
          recorder.tokens(model, principal.id, principal.org ?? '', usage.estimated, usage.prompt_tokens, usage.completion_tokens);
        }
        switch (reason) {
          case 'rate_limited': return recorder.rateLimited(scopeLabel(ctx), budgetLabel(ctx));
          case 'content_filter': return recorder.contentFilterBlock(ctx.endpoint);
          // A backend's own 4xx (upstream_rejected) is the client's problem, not the backend's.
          case 'upstream_error':
          case 'upstream_timeout': return recorder.upstreamError(upstreamLabel(ctx), kindLabel(ctx));
        }
      },
    };
  },
};
