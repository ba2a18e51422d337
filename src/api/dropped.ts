// What a translation for a chat backend left out of a Responses or Messages
// request, said where the client and the operator look: the x-sluice-dropped
// response header (the names as the client sent them, each clipped and
// percent-encoded past A-Z a-z 0-9 . _ : ~ -, since a client names its own
// metadata keys and tools: "☃", "ws\r\nX: 1" or "<script>" is never a bad
// header, a second header or markup), one log line (the same names), and
// sluice_protocol_dropped_total{protocol,name}, whose names are the
// protocols' own (a name a client made up counts as "other", so a client
// cannot grow the metric).
import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { RequestContext } from '../contract/plugin';

/** The header stays a header: at most this many names, each at most NAME_CHARS of the client's characters, this long in all. */
const HEADER_NAMES = 32;
const NAME_CHARS = 64;
const HEADER_CHARS = 1024;

const SAFE_NAME = /^[A-Za-z0-9._:~-]*$/;
const isSafeByte = (b: number): boolean =>
  (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x2e || b === 0x5f || b === 0x3a || b === 0x7e || b === 0x2d;

/** A name as the header and the log carry it: its first NAME_CHARS characters, every other byte of their UTF-8 as %XX. */
export function shownName(name: string): string {
  const clipped = name.length > NAME_CHARS ? name.slice(0, NAME_CHARS) : name;
  if (SAFE_NAME.test(clipped)) return clipped;
  let out = '';
  for (const b of Buffer.from(clipped, 'utf8')) out += isSafeByte(b) ? String.fromCharCode(b) : `%${b < 16 ? '0' : ''}${b.toString(16).toUpperCase()}`;
  return out;
}

/** The header's value: the first names, whole, as many as fit. */
function headerValue(names: readonly string[]): string {
  let value = names[0];
  for (let i = 1; i < names.length && value.length + 2 + names[i].length <= HEADER_CHARS; i++) value += `, ${names[i]}`;
  return value;
}

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
      const names = dropped.slice(0, HEADER_NAMES).map(shownName);
      ctx.setHeader('x-sluice-dropped', headerValue(names));
      logger.info({ requestId: ctx.id, protocol: ctx.protocol, dropped: names }, 'translation dropped what the backend cannot use');
      if (counter !== undefined) for (const name of dropped) counter.inc({ protocol: ctx.protocol, name: KNOWN.test(name) ? name : 'other' });
    },
  };
}
