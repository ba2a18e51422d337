// The public API: everything a plugin (built in or third-party) may import
// from the core. Plugins import this module only; CI fails on a deeper import.
export { GatewayError, REASONS, type Reason } from './contract/errors';
export type { AdmissionService, ConcurrencyLimit, LeaseScope } from './contract/admission';
export { formatReset, limiterUnavailable, retryAfterSeconds } from './admission/refusals';
export { PRIMARY_TIMEOUT_MS, TickBatcher } from './worker-link/tick-batcher';
export { decidedInProcess, giveBack, InsuranceLimiter, LimiterPools, settle, type Limiter } from './limiters/pools';
export { intLike, sizeLike } from './config/values';
export {
  STAGES,
  type Awaitable, type EventVerdict, type Outcome, type PluginDefinition, type PluginEnv, type PluginHooks,
  type FieldPoint, type OutputMatch, type OutputRules, type OutputScan, type PrimaryLink, type RequestContext, type ResponseHead, type Services, type Stage, type StoreHealthNotes, type StreamEvent, type ToolCallContext, type ToolResult, type Usage, type WorkerLink,
} from './contract/plugin';
export type { AudioRequest, ChatMessage, ChatRequest, ClientProtocol, ContentPart, ImageRequest, InputsRequest, Price, PriceList, Principal, RedisClient, Route, Team, TeamLookup, ToolCall } from './contract/types';
export { audioCost, costText, imageCost, roundCost, tokenCost } from './pricing/prices';
export { type ConfigView, type GatewayConfig, type Limits } from './config/schema';
export { exactModelIds } from './routing/routes';
export { estimateTokens, promptChars, promptEstimate } from './request/usage';
export { outputCapOf } from './request/output-cap';
export { promptTokenBound } from './request/token-bound';
export { rewriteTexts } from './api/rewrite-texts';
export { collapse, compose, foldReadings, foldText, lightReading, type Accents, type Composed } from './text/fold';
export { foldedAt, foldMapped, originalAt, sourceOf, type MappedFold, type MappedReading } from './text/fold-map';
export { decodeJsonEscapes } from './text/json-escapes';
