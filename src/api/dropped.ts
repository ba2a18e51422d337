// What a translation for a chat backend left out of a Responses or Messages
// request, said where the client and the operator look: the x-sluice-dropped
// response header (the names as the client sent them), one log line, and
// sluice_protocol_dropped_total{protocol,name}, whose names are the
// protocols' own (a name a client made up counts as "other", so a client
// cannot grow the metric).
import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { RequestContext } from '../pipeline/contract';

/** The header stays a header: at most this many names, this long. */
const HEADER_NAMES = 32;
const HEADER_CHARS = 1024;

/**
 * Names a protocol defines, counted by name; anything else is "other". A part
 * a client names itself (a metadata key, a block or tool field it made up) is
 * never matched by a pattern here, or each new one would be a new series.
 */
const KNOWN = /^(tools:(web_search|web_search_preview|file_search|code_interpreter|mcp|image_generation|computer_use_preview|custom|local_shell|shell|apply_patch|namespace|other|[a-z_]+_20\d{6})|input:[a-z_]+|content:[a-z_]+|include|truncation|prompt_cache_key|safety_identifier|client_metadata|background|top_logprobs|max_tool_calls|text\.verbosity|conversation|prompt|reasoning\.summary|service_tier|store|cache_control|thinking|thinking\.display|redacted_thinking|context_management|container|mcp_servers|assistant_prefill|documents|output_config\.(effort|format)|content\.(thinking|redacted_thinking|document|search_result|image\.file)|tools\.(defer_loading|input_examples))$/;

export interface DroppedReporter {
  report(ctx: RequestContext, dropped: readonly string[]): void;
}

export function droppedReporter(registry: Registry | undefined, logger: Logger): DroppedReporter {
  const counter = registry && ((registry.getSingleMetric('sluice_protocol_dropped_total') as Counter | undefined) ?? new Counter({
    name: 'sluice_protocol_dropped_total', registers: [registry], labelNames: ['protocol', 'name'],
    help: 'Fields, tools and items of Responses and Messages requests a chat backend could not use, left out by the translation.',
  }));
  return {
    report(ctx, dropped) {
      if (dropped.length === 0) return;
      ctx.setHeader('x-sluice-dropped', dropped.slice(0, HEADER_NAMES).join(', ').slice(0, HEADER_CHARS));
      logger.info({ requestId: ctx.id, protocol: ctx.protocol, dropped: dropped.slice(0, HEADER_NAMES) }, 'translation dropped what the backend cannot use');
      if (counter !== undefined) for (const name of dropped) counter.inc({ protocol: ctx.protocol, name: KNOWN.test(name) ? name : 'other' });
    },
  };
}
