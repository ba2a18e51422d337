// rate-limit: every request must pass its key's budgets and its org's, each a
// number of requests and/or tokens per window, and the in-flight limits of its
// key, org, model (route) and upstream. Requests are counted when admitted;
// tokens are reserved on admission (prompt estimate plus max_tokens) and
// settled after, from the backend's usage. A request over an in-flight limit
// waits in a bounded queue. With `redis` in the config all replicas share one
// count; without it, counts are per machine (with several workers, the
// primary keeps the budgets' counts and the in-flight leases). Budgets come from keys[].limits
// and orgs.<name>.limits; `defaults` covers keys that name none.
//
//   - { name: rate-limit, defaults: { requests: 120, tokens: 200000, concurrency: 8 }, queueTimeoutMs: 10000 }
import type { PluginDefinition } from '../../src';
import { servePrimary } from './cluster';
import { serveLeases } from './primary-leases';
import { StoreHealth } from './health';
import { createHooks, type RateLimitState } from './hooks';
import { limiterSource } from './limiters';
import { limiterMetrics } from './metrics';
import { compilePolicies } from './policy';
import { AdmissionQueue } from './queue';
import { admissionObserver } from './queue-metrics';
import { leaseStore } from './lease-stores';
import { compileScopes } from './scopes';
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
    const routeAt = config.routes?.findIndex((r) => r?.maxInFlight !== undefined) ?? -1;
    const upstream = Object.entries(config.upstreams ?? {}).find(([, u]) => u?.maxInFlight !== undefined)?.[0];
    const where = keyAt !== -1 ? `keys[${keyAt}].limits` : org !== undefined ? `orgs.${org}.limits`
      : routeAt !== -1 ? `routes[${routeAt}].maxInFlight` : upstream !== undefined ? `upstreams.${upstream}.maxInFlight` : undefined;
    return where === undefined ? [] : [`${where}: limits need the rate-limit plugin; add "- { name: rate-limit }" to plugins`];
  },
  // With several workers, the memory store's counts and leases live in the primary.
  setUpPrimary(primary) {
    servePrimary(primary);
    serveLeases(primary);
  },
  create({ defaults, queueTimeoutMs, queueMax, leaseMs, defaultMaxTokens }, { config, logger, services }) {
    const redis = config.redis;
    const client = redis === undefined ? undefined : services.redis;
    if (redis !== undefined && client === undefined) throw new Error('plugin "rate-limit": the config names redis but the gateway made no connection (services.redis)');
    const failMode = redis?.failMode ?? 'open';
    const prefix = redis?.prefix ?? DEFAULT_PREFIX;
    const limiterFor = limiterSource({ client, failMode, services });
    const policies = compilePolicies(config, defaults, prefix, limiterFor);
    const scopes = compileScopes(config, defaults, prefix);
    const metrics = limiterMetrics(services);
    const health = client === undefined ? undefined : new StoreHealth(logger);
    const anyLimit = scopes.routes.some((r) => r !== undefined) || scopes.upstreams.size > 0 || [...scopes.keys.values()].some((k) => k.limits.length > 0);
    // The leases' own health with several workers and no Redis: the primary, not Redis, may fail to answer.
    const leaseHealth = client === undefined && services.cluster !== undefined ? new StoreHealth(logger, 'primary') : health;
    const queue = anyLimit
      ? new AdmissionQueue(leaseStore(services, client, failMode, leaseMs), { timeoutMs: queueTimeoutMs, max: queueMax }, admissionObserver(services, metrics, leaseHealth, true))
      : undefined;
    return createHooks({ policies, scopes, queue, defaultMaxTokens, logger, metrics, health });
  },
};
