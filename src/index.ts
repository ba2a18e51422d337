// What a plugin (built in or third-party) imports from the core.
export { GatewayError, REASONS, type Reason } from './errors';
export type { PluginDefinition, PluginHooks, PluginEnv, RequestContext, Outcome, Usage, ResponseHead, Services } from './pipeline/contract';
export { exactModelIds } from './routing/routes';
