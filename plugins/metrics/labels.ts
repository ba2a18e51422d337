// Label values are bounded, so the number of series is fixed by the config,
// never by what clients send: a model is a configured id or "other", a key is
// its configured id, a team and an org the key's (named by the operator), a
// reason comes from the error catalogue, and values a third-party plugin
// might put in an error's details are checked against the known sets.
import { exactModelIds, type RequestContext } from '../../src';
import type { GatewayConfig } from '../../src';

export const OTHER = 'other';

/** Maps a client's model id to its label; '' when the request never named one (401, /models). */
export function modelLabeler(config: GatewayConfig): (model: string | undefined) => string {
  const known = new Set(exactModelIds(config.routes));
  return (model) => (model === undefined ? '' : known.has(model) ? model : OTHER);
}

/** `backend`: the model's backend answered 429 and is resting until its Retry-After. */
export const SCOPE_VALUES = ['key', 'team', 'org', 'model', 'upstream', 'backend'] as const;
export const BUDGET_VALUES = ['requests', 'tokens', 'concurrency'] as const;
export const KIND_VALUES = ['connect', 'timeout', 'status', 'stream'] as const;
/** The endpoints whose requests carry text to filter. */
export const FILTERED_ENDPOINTS = ['chat', 'images', 'embeddings', 'rerank', 'score', 'moderations', 'transcriptions', 'translations', 'speech', 'passthrough'] as const;

const SCOPES: ReadonlySet<string> = new Set(SCOPE_VALUES);
const BUDGETS: ReadonlySet<string> = new Set(BUDGET_VALUES);
const KINDS: ReadonlySet<string> = new Set(KIND_VALUES);

const oneOf = (known: ReadonlySet<string>, value: string | undefined): string => (value !== undefined && known.has(value) ? value : OTHER);

export const scopeLabel = (ctx: RequestContext): string => oneOf(SCOPES, ctx.error?.details?.scope);
export const budgetLabel = (ctx: RequestContext): string => oneOf(BUDGETS, ctx.error?.details?.budget);
export const kindLabel = (ctx: RequestContext): string => oneOf(KINDS, ctx.error?.details?.kind);

/** The configured upstream the request was routed to (upstream errors happen only after routing). */
export const upstreamLabel = (ctx: RequestContext): string => ctx.route?.upstream ?? OTHER;
