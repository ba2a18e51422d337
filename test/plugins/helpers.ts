// A plugin's hooks on a small context, and its settings checked the way the
// config loader checks them (problems with their paths).
import type { PluginDefinition, PluginHooks, RequestContext } from '../../src/pipeline/contract';
import type { PluginEntry } from '../../src/config/schema';
import { PluginRegistry } from '../../src/pipeline/registry';
import pino from 'pino';
import { GatewayError } from '../../src/errors';

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

export const chatContext = (contents: string[], model_params: Record<string, unknown> = {}): RequestContext => ({
  chat: { model: 'chat-a', stream: false, model_params, messages: contents.map((content, i) => ({ role: i === 0 ? 'system' : 'user', content })) },
}) as unknown as RequestContext;

export const imageContext = (prompt: string, model_params: Record<string, unknown> = {}): RequestContext => ({
  image: { model: 'img-a', prompt, model_params },
}) as unknown as RequestContext;

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
