// The admin listener: a node:http server apart from the public one (like the
// metrics listener), on admin.host and admin.port, serving the routes of
// src/admin/routes.ts to callers with an admin key. With several workers the
// primary runs it: one per machine. Host and port are read once, at start.
//
//   const admin = await startAdminServer(deps, { host: '127.0.0.1', port: 9465 });
//   ...; await admin.close();
import { createPublicServer } from '../plumbing/http-server';
import { bind, type Listener } from '../plumbing/listen';
import { adminKeysOf } from './auth';
import { adminRoutes, type AdminDeps } from './routes';
import { createAdminHandler } from './router';

/** Base URL, e.g. http://127.0.0.1:9465; the API is under `${url}/admin/`. */
export type AdminServer = Listener;

/** Slow clients are cut as on the public listener. */
const TIMEOUTS = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 };

export function startAdminServer(deps: AdminDeps, options: { host: string; port: number }): Promise<AdminServer> {
  const keysOf = adminKeysOf();
  const handler = createAdminHandler(adminRoutes(deps), { adminKeys: () => keysOf(deps.current().config.admin), logger: deps.logger });
  return bind(createPublicServer(handler, TIMEOUTS), options.port, options.host, 'the admin API (admin.host, admin.port)');
}
