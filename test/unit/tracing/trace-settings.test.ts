// telemetry.traces and the standard OTEL_* variables: a field the config
// leaves out comes from its variable, then its default; the config wins; a
// bad variable is one problem that names it.
import { tracesSchema } from '../../../src/config/schema';
import { DEFAULT_ENDPOINT, disabledByEnv, traceSettings } from '../../../src/tracing/settings';

const config = (c: Record<string, unknown> = {}) => tracesSchema.parse(c);

describe('traceSettings', () => {
  it('defaults: the local collector over protobuf, every root sampled, parent-based', () => {
    expect(traceSettings(config(), {}).settings).toEqual({
      endpoint: DEFAULT_ENDPOINT, protocol: 'http/protobuf', headers: {}, timeoutMs: 10_000, ratio: 1, parentBased: true,
      maxQueueSize: 2048, scheduledDelayMs: 5_000, resource: {}, captureContent: false,
    });
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, { endpoint: 'http://collector:4318/v1/traces' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/traces' }, { endpoint: 'https://b/traces' }],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }, { protocol: 'http/json' }],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }, { protocol: 'http/protobuf' }],
    [{ OTEL_EXPORTER_OTLP_TIMEOUT: '3000' }, { timeoutMs: 3000 }],
    [{ OTEL_EXPORTER_OTLP_TIMEOUT: '3000', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '500' }, { timeoutMs: 500 }],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }, { ratio: 0.25, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, { ratio: 0, parentBased: true }],
    [{ OTEL_TRACES_SAMPLER: 'always_off' }, { ratio: 0, parentBased: false }],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_always_on' }, { ratio: 1, parentBased: true }],
    [{ OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_SCHEDULE_DELAY: '250' }, { maxQueueSize: 100, scheduledDelayMs: 250 }],
    [{ OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,team=ml%20infra', OTEL_SERVICE_NAME: 'edge' }, { resource: { 'deployment.environment.name': 'prod', team: 'ml infra', 'service.name': 'edge' } }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, { endpoint: DEFAULT_ENDPOINT }],
  ])('reads %j', (env, expected) => {
    expect(traceSettings(config(), env).settings).toMatchObject(expected);
  });

  it('the config wins over every variable, field by field', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5', OTEL_SERVICE_NAME: 'env' };
    expect(traceSettings(config({ endpoint: 'http://own:4318/v1/traces', protocol: 'http/protobuf', sampler: { ratio: 0.1 }, resource: { 'service.name': 'own' } }), env).settings).toMatchObject({
      endpoint: 'http://own:4318/v1/traces', protocol: 'http/protobuf', ratio: 0.1, parentBased: false, resource: { 'service.name': 'own' },
    });
  });

  it('names each bad variable', () => {
    expect(traceSettings(config(), {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_TRACES_SAMPLER: 'sometimes', OTEL_BSP_MAX_QUEUE_SIZE: '-1',
    }).problems).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL (got "collector:4318")',
      'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json: traces go over OTLP/HTTP (got "grpc"; a collector takes it on port 4318)',
      'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio (got "sometimes")',
      'OTEL_BSP_MAX_QUEUE_SIZE must be a whole number above 0 (got "-1")',
    ]);
    expect(traceSettings(config(), { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }).problems).toEqual(['OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got "2")']);
  });

  it('a variable the config overrides is not checked', () => {
    expect(traceSettings(config({ protocol: 'http/json', endpoint: 'http://c/v1/traces' }), { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_ENDPOINT: 'nope' }).problems).toEqual([]);
  });

  it('OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none turn traces off', () => {
    expect(disabledByEnv({ OTEL_SDK_DISABLED: 'true' })).toBe(true);
    expect(disabledByEnv({ OTEL_TRACES_EXPORTER: 'none' })).toBe(true);
    expect(disabledByEnv({ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
  });
});

describe('a sampler named like an Object member', () => {
  it.each(['toString', 'constructor', '__proto__'])('OTEL_TRACES_SAMPLER=%s is an unknown sampler', (name) => {
    expect(traceSettings(config(), { OTEL_TRACES_SAMPLER: name }).problems).toEqual([
      `OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio (got "${name}")`,
    ]);
  });
});
