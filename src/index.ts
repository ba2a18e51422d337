// The public API: everything a plugin (built in or third-party) may import
// from the core. Plugins import this module only; CI fails on a deeper import.
export { GatewayError, REASONS, type Reason } from './errors';
export {
  STAGES,
  type Awaitable, type EventVerdict, type Outcome, type PluginDefinition, type PluginEnv, type PluginHooks,
  type PrimaryLink, type RequestContext, type ResponseHead, type Services, type Stage, type StreamEvent, type Usage, type WorkerLink,
} from './pipeline/contract';
export type { ChatMessage, ChatRequest, ContentPart, ImageRequest, Principal, RedisClient, Route, ToolCall } from './types';
export { budgetSchema, type Budget, type ConfigView, type GatewayConfig } from './config/schema';
export { exactModelIds } from './routing/routes';
export { estimateTokens, promptChars } from './proxy/usage';
