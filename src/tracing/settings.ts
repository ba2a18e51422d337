// What the exporter and the sampler run with: telemetry.traces, each field
// left out taken from the standard OTEL_* variable, then its default. One
// pure function of (config, environment), so the rules are table-tested and
// a bad variable stops a start or a reload with a line that names it.
//
//   traceSettings({ captureContent: false }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' })
//     -> { endpoint: 'http://c:4318/v1/traces', ratio: 0.1, parentBased: false, protocol: 'http/protobuf', ... }
import type { TracesConfig } from '../config/schema';

export type TraceProtocol = 'http/protobuf' | 'http/json';

export interface TraceSettings {
  endpoint: string;
  protocol: TraceProtocol;
  /** The config's own; the exporter adds OTEL_EXPORTER_OTLP_(TRACES_)HEADERS under them. */
  headers: Record<string, string>;
  timeoutMs: number;
  /** Share of root requests sampled, from 0 to 1. */
  ratio: number;
  /** A request with a traceparent follows its sampled flag. */
  parentBased: boolean;
  maxQueueSize: number;
  scheduledDelayMs: number;
  /** Resource attributes from OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, then the config's (which win). */
  resource: Record<string, string | number | boolean>;
  captureContent: boolean;
}

export const DEFAULT_ENDPOINT = 'http://localhost:4318/v1/traces';
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_QUEUE = 2048;
const DEFAULT_DELAY_MS = 5_000;

/** OTEL_TRACES_SAMPLER's values as (ratio, parentBased); the ratio of the *_traceidratio ones comes from OTEL_TRACES_SAMPLER_ARG. */
const SAMPLERS: Record<string, { ratio?: number; parentBased: boolean }> = {
  always_on: { ratio: 1, parentBased: false },
  always_off: { ratio: 0, parentBased: false },
  traceidratio: { parentBased: false },
  parentbased_always_on: { ratio: 1, parentBased: true },
  parentbased_always_off: { ratio: 0, parentBased: true },
  parentbased_traceidratio: { parentBased: true },
};

const PROTOCOLS: readonly string[] = ['http/protobuf', 'http/json'];

/** An empty variable counts as unset. */
const given = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
};

const isUrl = (text: string): boolean => {
  try {
    return /^https?:$/.test(new URL(text).protocol);
  } catch {
    return false;
  }
};

/** Whether the variables turn tracing off even where the config asks for it (the SDK's own switches). */
export function disabledByEnv(env: NodeJS.ProcessEnv): boolean {
  return given(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || given(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase() === 'none';
}

/** The settings, or the problems with the variables (one line each, naming the variable). */
export function traceSettings(config: TracesConfig, env: NodeJS.ProcessEnv): { settings: TraceSettings; problems: [] } | { settings?: undefined; problems: string[] } {
  const problems: string[] = [];
  const positive = (name: string): number | undefined => {
    const value = given(env, name);
    if (value === undefined) return undefined;
    if (/^\d{1,9}$/.test(value) && Number(value) > 0) return Number(value);
    problems.push(`${name} must be a whole number above 0 (got ${JSON.stringify(value)})`);
    return undefined;
  };

  let endpoint = config.endpoint;
  if (endpoint === undefined) {
    const own = given(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
    const base = given(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
    if (own !== undefined && !isUrl(own)) problems.push(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:// or https:// URL (got ${JSON.stringify(own)})`);
    else if (own !== undefined) endpoint = own;
    else if (base !== undefined && !isUrl(base)) problems.push(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (got ${JSON.stringify(base)})`);
    // The general endpoint is the collector's root: each signal appends its own path.
    else if (base !== undefined) endpoint = `${base.replace(/\/+$/, '')}/v1/traces`;
  }

  let protocol = config.protocol as string | undefined;
  if (protocol === undefined) {
    const name = given(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
    protocol = given(env, name);
    if (protocol !== undefined && !PROTOCOLS.includes(protocol)) {
      problems.push(`${name} must be http/protobuf or http/json: traces go over OTLP/HTTP (got ${JSON.stringify(protocol)}; a collector takes it on port 4318)`);
    }
  }

  let fromEnv: { ratio?: number; parentBased: boolean } | undefined;
  const sampler = given(env, 'OTEL_TRACES_SAMPLER');
  if (sampler !== undefined) {
    fromEnv = Object.hasOwn(SAMPLERS, sampler) ? SAMPLERS[sampler] : undefined;
    if (fromEnv === undefined) problems.push(`OTEL_TRACES_SAMPLER must be one of ${Object.keys(SAMPLERS).join(', ')} (got ${JSON.stringify(sampler)})`);
    else if (fromEnv.ratio === undefined) {
      const arg = given(env, 'OTEL_TRACES_SAMPLER_ARG');
      const ratio = arg === undefined ? 1 : Number(arg);
      if (!(ratio >= 0 && ratio <= 1)) problems.push(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got ${JSON.stringify(arg)})`);
      fromEnv = { ratio, parentBased: fromEnv.parentBased };
    }
  }

  const timeoutMs = config.timeoutMs ?? positive('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? positive('OTEL_EXPORTER_OTLP_TIMEOUT') ?? DEFAULT_TIMEOUT_MS;
  const maxQueueSize = config.maxQueueSize ?? positive('OTEL_BSP_MAX_QUEUE_SIZE') ?? DEFAULT_QUEUE;
  const scheduledDelayMs = config.scheduledDelayMs ?? positive('OTEL_BSP_SCHEDULE_DELAY') ?? DEFAULT_DELAY_MS;
  if (problems.length > 0) return { problems };

  return {
    problems: [],
    settings: {
      endpoint: endpoint ?? DEFAULT_ENDPOINT,
      protocol: (protocol ?? 'http/protobuf') as TraceProtocol,
      headers: config.headers ?? {},
      timeoutMs,
      ratio: config.sampler?.ratio ?? fromEnv?.ratio ?? 1,
      parentBased: config.sampler?.parentBased ?? fromEnv?.parentBased ?? true,
      maxQueueSize,
      scheduledDelayMs,
      resource: { ...resourceFromEnv(env), ...config.resource },
      captureContent: config.captureContent,
    },
  };
}

/** OTEL_RESOURCE_ATTRIBUTES (key=value pairs, comma-separated, values percent-encoded) and OTEL_SERVICE_NAME, which wins for service.name. */
function resourceFromEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of given(env, 'OTEL_RESOURCE_ATTRIBUTES')?.split(',') ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      out[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      out[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
    }
  }
  const service = given(env, 'OTEL_SERVICE_NAME');
  if (service !== undefined) out['service.name'] = service;
  return out;
}
