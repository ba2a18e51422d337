// A plugin's hooks on a small context, and its settings checked the way the
// config loader checks them (problems with their paths).
import type { PluginDefinition, PluginEnv, PluginHooks, RequestContext, Services } from '../../src/contract/plugin';
import type { GatewayConfig, PluginEntry } from '../../src/config/schema';
import { validateConfig } from '../../src/config/load';
import { Admission } from '../../src/admission';
import { LeasePools } from '../../src/admission/stores';
import { PluginRegistry } from '../../src/pipeline/registry';
import pino from 'pino';
import { GatewayError } from '../../src/contract/errors';
import { messageTexts, type ChatMessage } from '../../src/api/chat-messages';
import { paramTexts } from '../../src/request/chat-params';
import { compilePrices } from '../../src/pricing/prices';

/** A plugin's hooks as tests call them: each with the context only, the per-request state passed as the gateway does. */
export type TestHooks = { [K in keyof PluginHooks<unknown>]-?: (ctx: RequestContext, ...rest: any[]) => any };

export function withState(hooks: PluginHooks<any>): Partial<TestHooks> {
  const states = new WeakMap<object, unknown>();
  const stateOf = (ctx: RequestContext): unknown => {
    if (!states.has(ctx)) states.set(ctx, hooks.state?.());
    return states.get(ctx);
  };
  const out: Record<string, unknown> = {};
  for (const phase of ['onRequest', 'outputRules', 'onResponseHead', 'onEvent', 'onStreamEnd', 'onResponseBody', 'onFinish'] as const) {
    const fn = hooks[phase] as ((...args: unknown[]) => unknown) | undefined;
    if (fn) out[phase] = (ctx: RequestContext, ...rest: unknown[]) => fn.call(hooks, ctx, ...rest, stateOf(ctx));
  }
  if (hooks.close) out.close = () => hooks.close!();
  return out as Partial<TestHooks>;
}

/**
 * The env a plugin's create() gets from the gateway: the config (an empty
 * one unless given), its admission, and what the plugin keeps for the process.
 */
export function pluginEnv<K>(plugin: PluginDefinition<any, any, K>, config: GatewayConfig = validateConfig({}, '(inline)', {}), services: Services = {}, logger = pino({ level: 'silent' })): PluginEnv<K> {
  const admission = new Admission(config, { ...services, leases: new LeasePools(services.cluster) }, logger);
  return { config, logger, services, admission, prices: compilePrices(config.pricing), kept: plugin.keep?.(services) as K };
}

export async function hooksOf<S>(plugin: PluginDefinition<S>, entry: Record<string, unknown> = {}): Promise<Partial<TestHooks>> {
  new PluginRegistry([plugin]); // as the gateway does: its reasons join the catalogue
  const settings = plugin.schema.parse(entry);
  return withState(await plugin.create(settings, pluginEnv(plugin)));
}

/** The config problems for `plugins: [{ name, ...entry }]`. */
export function configProblems(plugin: PluginDefinition<any>, entry: Record<string, unknown>): string[] {
  const problems: string[] = [];
  new PluginRegistry([plugin]).resolveEntries([{ name: plugin.name, ...entry } as PluginEntry], '/', problems);
  return problems;
}

/** A chat context as the gateway builds it: plain contents become system then user messages; messages are taken as given. */
export function chatContext(contents: Array<string | ChatMessage>, model_params: Record<string, unknown> = {}): RequestContext {
  const messages = contents.map((c, i): ChatMessage => (typeof c === 'string' ? { role: i === 0 ? 'system' : 'user', content: c } : c));
  const texts: string[] = [];
  messageTexts(messages, texts);
  paramTexts(model_params, texts);
  return { chat: { model: 'chat-a', stream: false, model_params, messages, texts }, texts } as unknown as RequestContext;
}

export function imageContext(prompt: string, model_params: Record<string, unknown> = {}): RequestContext {
  const texts = [prompt];
  paramTexts(model_params, texts);
  return { image: { model: 'img-a', prompt, model_params, texts }, texts } as unknown as RequestContext;
}

/** The GatewayError onRequest throws for this context, or undefined if it lets it through. */
export async function refusalOf(hooks: Partial<TestHooks>, ctx: RequestContext): Promise<GatewayError | undefined> {
  try {
    await hooks.onRequest!(ctx);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
}
