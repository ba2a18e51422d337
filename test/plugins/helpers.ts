// A plugin's hooks on a small context, and its settings checked the way the
// config loader checks them (problems with their paths).
import type { PluginDefinition, PluginHooks, RequestContext } from '../../src/pipeline/contract';
import type { PluginEntry } from '../../src/config/schema';
import { PluginRegistry } from '../../src/pipeline/registry';
import pino from 'pino';
import { GatewayError } from '../../src/errors';
import { messageTexts, type ChatMessage } from '../../src/api/chat-messages';
import { paramTexts } from '../../src/api/chat-params';

export async function hooksOf<S>(plugin: PluginDefinition<S>, entry: Record<string, unknown> = {}): Promise<PluginHooks> {
  const settings = plugin.schema.parse(entry);
  return plugin.create(settings, { config: {} as never, logger: pino({ level: 'silent' }), services: {} });
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
  return { chat: { model: 'chat-a', stream: false, model_params, messages, texts } } as unknown as RequestContext;
}

export function imageContext(prompt: string, model_params: Record<string, unknown> = {}): RequestContext {
  const texts = [prompt];
  paramTexts(model_params, texts);
  return { image: { model: 'img-a', prompt, model_params, texts } } as unknown as RequestContext;
}

/** The GatewayError onRequest throws for this context, or undefined if it lets it through. */
export async function refusalOf(hooks: PluginHooks, ctx: RequestContext): Promise<GatewayError | undefined> {
  try {
    await hooks.onRequest!(ctx);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
}
