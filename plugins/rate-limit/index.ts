// rate-limit: every request must pass its end user's budgets (limits.perUser, a template
// every end user of the key gets), its key's, its team's and its org's, each a
// number of requests and/or tokens per window, and/or dollars per day, month
// or window (priced from the config's `pricing`). Requests are counted when
// admitted; tokens and dollars are reserved on admission (the prompt, at its
// upper bound under a hard budget, plus the output cap, priced at the dearest
// model the request may reach) and settled after, from the backend's usage.
// Budgets are hard unless `enforce: soft`: a request without an output cap is
// sent with the largest that fits, so concurrent requests never together
// overspend, whatever the language of their prompts. With `redis` in
// the config all replicas share one count; without it, counts are per
// machine (with several workers, the primary keeps them: the core's
// limiters, src/limiters/, which the MCP tool-call limits share). Budgets come from
// keys[].limits, teams.<name>.limits and orgs.<name>.limits (fields this plugin adds); `defaults`
// covers keys that name none. In-flight limits are the core's (admission).
//
//   - { name: rate-limit, defaults: { requests: 120, tokens: 200000, dollars: 50, dollarWindow: month }, defaultMaxTokens: 1024 }
import { LimiterPools, type PluginDefinition } from '../../src';
import { checkDollars, checkPerUser } from './check';
import { createHooks, type RateLimitState } from './hooks';
import { compilePolicies } from './policy';
import { budgetSchema, limitsFields, settingsSchema, type RateLimitSettings } from './settings';

export const DEFAULT_PREFIX = 'sluice:';

export const plugin: PluginDefinition<RateLimitSettings, RateLimitState, LimiterPools> = {
  name: 'rate-limit',
  stage: 'admit',
  schema: settingsSchema,
  fields: { limits: limitsFields },
  check: (config, active) => (active ? [...checkDollars(config), ...checkPerUser(config)] : []),
  // In-process limiters keep their counts across reloads.
  keep: (services) => new LimiterPools(services.cluster),
  create({ defaults, defaultMaxTokens }, { config, logger, services, kept, prices }) {
    const redis = config.redis;
    const client = redis === undefined ? undefined : services.redis;
    if (redis !== undefined && client === undefined) throw new Error('plugin "rate-limit": the config names redis but the gateway made no connection (services.redis)');
    const limiterFor = kept.source(client, redis?.failMode ?? 'open');
    const policies = compilePolicies(config, defaults && budgetSchema.parse(defaults), redis?.prefix ?? DEFAULT_PREFIX, limiterFor, services.teams);
    return createHooks({ policies, defaultMaxTokens, prices, logger, health: client === undefined ? undefined : services.storeHealth });
  },
};
