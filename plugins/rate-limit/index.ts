// rate-limit: every request must pass its key's budgets and its org's, each a
// number of requests and/or tokens per window. Requests are counted when
// admitted; tokens are checked before (a spent budget refuses) and charged
// after, from the backend's usage. With `redis` in the config all replicas
// share one count; without it, counts are per machine (with several workers,
// the primary keeps them). Budgets come from
// keys[].limits and orgs.<name>.limits; `defaults` covers keys that name none.
//
//   - { name: rate-limit, defaults: { requests: 120, tokens: 200000, windowSeconds: 60 } }
import type { PluginDefinition } from '../../src';
import { servePrimary } from './cluster';
import { StoreHealth } from './health';
import { createHooks, type RateLimitState } from './hooks';
import { limiterSource } from './limiters';
import { limiterMetrics } from './metrics';
import { compilePolicies } from './policy';
import { settingsSchema, type RateLimitSettings } from './settings';

export const DEFAULT_PREFIX = 'sluice:';

export const plugin: PluginDefinition<RateLimitSettings, RateLimitState> = {
  name: 'rate-limit',
  stage: 'admit',
  schema: settingsSchema,
  // Limits without the plugin that enforces them would silently be off.
  check(config, active) {
    if (active) return [];
    const keyAt = config.keys?.findIndex((k) => k?.limits !== undefined) ?? -1;
    const org = Object.entries(config.orgs ?? {}).find(([, o]) => o?.limits !== undefined)?.[0];
    const where = keyAt !== -1 ? `keys[${keyAt}].limits` : org !== undefined ? `orgs.${org}.limits` : undefined;
    return where === undefined ? [] : [`${where}: limits need the rate-limit plugin; add "- { name: rate-limit }" to plugins`];
  },
  // With several workers, the memory store's counts live in the primary.
  setUpPrimary: servePrimary,
  create({ defaults }, { config, logger, services }) {
    const redis = config.redis;
    const client = redis === undefined ? undefined : services.redis;
    if (redis !== undefined && client === undefined) throw new Error('plugin "rate-limit": the config names redis but the gateway made no connection (services.redis)');
    const limiterFor = limiterSource({ client, failMode: redis?.failMode ?? 'open', services });
    const policies = compilePolicies(config, defaults, redis?.prefix ?? DEFAULT_PREFIX, limiterFor);
    return createHooks({
      policies,
      logger,
      metrics: limiterMetrics(services),
      health: client === undefined ? undefined : new StoreHealth(logger),
    });
  },
};
