// A traced gateway process for the trace tests: the real gateway, spawned
// as in production, exporting over OTLP/HTTP to a real receiver; and the
// three client protocols as the trace tests send them (streamed, with an
// output cap and a temperature the server span must carry).
//
//   const t = await tracedSetup(alice, { captureContent: true }, {}, { plugins: [{ name: 'pii' }] });
//   await post(`${t.gw.url}/v1/messages`, TRACE_PROTOCOLS[2].body('ok-1', 'hi'), bearer(alice.key));
import { startBackend } from './backends';
import { spawnGateway, type GatewayProcess } from './process';
import { startOtlpReceiver } from './otlp-receiver';

/** OTLP's SpanKind of a server and of a client span. */
export const SERVER = 2;
export const CLIENT = 3;

/** What every protocol's body asks for: the server span's gen_ai.request.max_tokens and .temperature. */
export const MAX_TOKENS = 64;
export const TEMPERATURE = 0.25;

const PROMPT = 'Stream please.';

export const TRACE_PROTOCOLS = [
  {
    name: 'chat', path: '/v1/chat/completions', finish: 'stop',
    body: (model: string, text = PROMPT) => ({ model, stream: true, max_completion_tokens: MAX_TOKENS, temperature: TEMPERATURE, messages: [{ role: 'user', content: text }] }),
  },
  {
    name: 'responses', path: '/v1/responses', finish: 'completed',
    body: (model: string, text = PROMPT) => ({ model, stream: true, max_output_tokens: MAX_TOKENS, temperature: TEMPERATURE, input: text }),
  },
  {
    name: 'messages', path: '/v1/messages', finish: 'end_turn',
    body: (model: string, text = PROMPT) => ({ model, stream: true, max_tokens: MAX_TOKENS, temperature: TEMPERATURE, messages: [{ role: 'user', content: text }] }),
  },
] as const;

/** A gateway process of this config (metrics listener off unless given). */
export const spawnWith = (config: Record<string, unknown>): Promise<GatewayProcess> =>
  spawnGateway(JSON.stringify({ ...config, server: { metrics: { port: 0 }, ...(config.server as object) } }));

/**
 * A backend, a receiver and a gateway with one route to the backend, traced
 * as `traces` says; `extra` adds to the config (plugins, pass-through routes).
 */
export async function tracedSetup(key: { entry: Record<string, unknown> }, traces: Record<string, unknown>, server: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const backend = await startBackend({ format: 'openai', events: 2, gapMs: 0 });
  const receiver = await startOtlpReceiver();
  const gw = await spawnWith({
    server, keys: [key.entry], upstreams: { b: { url: backend.base, format: 'openai' } }, routes: [{ model: '*', upstream: 'b' }],
    telemetry: { traces: { endpoint: receiver.url, scheduledDelayMs: 20, ...traces } },
    ...extra,
  });
  const close = async () => {
    gw.kill();
    await receiver.close();
    await backend.close();
  };
  return { backend, receiver, gw, close };
}

export type TracedSetup = Awaited<ReturnType<typeof tracedSetup>>;
