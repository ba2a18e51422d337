// metrics: counts every API request, its latency, tokens and refusals into the
// Prometheus registry the gateway serves on its metrics listener
// (server.metrics). Its stage is observe: wherever the config lists it, its
// hooks run after every validate and admit plugin, so a request it sees in
// onRequest has passed every policy and goes to a backend (sluice_inflight_requests).
//
//   - { name: metrics }
import { z } from 'zod';
import type { PluginDefinition } from '../../src';
import { budgetLabel, kindLabel, modelLabeler, scopeLabel, upstreamLabel } from './labels';
import { recorderFor } from './recorder';

// Bits of the per-request state: what this request holds on the gauges, and
// whether it has finished (nothing is counted after that).
const INFLIGHT = 1;
const STREAMING = 2;
const FINISHED = 4;

interface State { flags: number }

export const plugin: PluginDefinition<Record<string, never>, State> = {
  name: 'metrics',
  stage: 'observe',
  schema: z.strictObject({}),
  recordsRequests: true,
  create(_settings, { config, services }) {
    if (services.metrics === undefined) throw new Error('plugin "metrics": the gateway provides no Prometheus registry (services.metrics)');
    const recorder = recorderFor(services.metrics);
    recorder.startAtZero(Object.keys(config.upstreams));
    const { inflight, activeStreams } = recorder.metrics;
    const modelOf = modelLabeler(config);

    return {
      state: () => ({ flags: 0 }),
      onRequest(_ctx, state) {
        if (state.flags & FINISHED) return;
        state.flags |= INFLIGHT;
        inflight.inc();
      },
      onResponseHead(_ctx, head, state) {
        if (!head.stream || state.flags & (FINISHED | STREAMING)) return;
        state.flags |= STREAMING;
        activeStreams.inc();
      },
      onFinish(ctx, outcome, state) {
        if (state.flags & INFLIGHT) inflight.dec();
        if (state.flags & STREAMING) activeStreams.dec();
        state.flags = FINISHED;

        const model = modelOf(ctx.model);
        const reason = outcome.reason ?? '';
        recorder.request(ctx.endpoint, ctx.version, model, outcome.status, reason, ctx.protocol);
        recorder.duration(ctx.endpoint, model, ctx.stream, outcome.durationMs / 1000, ctx.protocol);
        const { upstreamFirstByte, firstEvent } = ctx.timings;
        if (upstreamFirstByte !== undefined && ctx.route !== undefined) recorder.upstreamTtfb(ctx.route.upstream, model, upstreamFirstByte / 1000);
        if (firstEvent !== undefined) recorder.firstEvent(model, firstEvent / 1000);
        if (ctx.usage !== undefined && ctx.principal !== undefined) {
          const { usage, principal } = ctx;
          recorder.tokens(model, principal.id, principal.team ?? '', principal.org ?? '', usage.estimated, usage);
        }
        if (ctx.cost !== undefined) recorder.cost(model, ctx.principal?.id ?? '', ctx.principal?.team ?? '', ctx.principal?.org ?? '', ctx.cost);
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
