// Every route of the admin API, in one list: the place to mount a handler.
// A route is a method, a path, the action its audit line names, and a
// handler that gets the call (params, query, JSON body, who) and returns its
// answer; the router does the rest (admin key, body, 404/405, errors, audit).
// To add one, add a line here:
//
//   route('GET', '/admin/things', 'things.list', thingsHandler(deps)),
//
// where thingsHandler(deps) returns an AdminHandler, (call) => ({ body })
// or a promise of it, and throws a GatewayError to refuse.
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load';
import type { PluginRegistry } from '../pipeline/registry';
import type { RedisClient } from '../contract/types';
import type { KeyStore } from '../keys/store';
import type { SpendStore } from '../spend';
import { keyRoutes } from './key-routes';
import { spendRoutes } from './spend-routes';
import { teamRoutes } from './team-routes';
import type { Teams } from '../teams/teams';
import type { AdminRoute } from './router';

/** What the admin API's handlers may use. */
export interface AdminDeps {
  /** The config in force now (a reload changes it) and its file. */
  current(): LoadedConfig;
  /** The plugins known to this gateway: what checks a key's fields. */
  registry: PluginRegistry;
  /** The runtime keys' (and teams') store; undefined while the config has no `admin` section. */
  store(): KeyStore | undefined;
  /** The teams in force in this process (the config's and the runtime ones). */
  teams(): Teams;
  /** The Redis connection, when the config names Redis. */
  redis(): RedisClient | undefined;
  /** The spend records to read (Redis, or this process's memory); undefined while none are kept. */
  spend(): SpendStore | undefined;
  logger: Logger;
}

export function adminRoutes(deps: AdminDeps): AdminRoute[] {
  return [
    ...keyRoutes({ rules: () => ({ loaded: deps.current(), registry: deps.registry, teams: deps.teams() }), store: deps.store }),
    ...teamRoutes({ rules: () => ({ loaded: deps.current(), registry: deps.registry }), store: deps.store, teams: deps.teams }),
    ...spendRoutes({ spend: deps.spend }),
  ];
}
