// Starts the real gateway app on a real socket (port 0) from an inline config.
import type { Server } from 'node:http';
import { createPublicServer } from '../../src/plumbing/http-server';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { validateConfig } from '../../src/config/load';
import { createGateway, gatewayConfigCheck, startAdminListener, type Gateway } from '../../src/gateway';
import type { AdminServer } from '../../src/admin/server';
import { hashKey } from '../../src/auth/keys';
import type { PluginDefinition } from '../../src/contract/plugin';
import { startMetricsServer, type MetricsServer } from '../../src/metrics/server';

export interface TestGateway {
  url: string;
  server: Server;
  gateway: Gateway;
  /** The metrics listener (on its own ephemeral port), when `metrics` was asked for. */
  metrics?: MetricsServer;
  /** The admin listener (on its own ephemeral port), when `admin` was asked for (the config needs an admin section). */
  admin?: AdminServer;
  close(): Promise<void>;
}

/** A fresh random key and the config entry that accepts it. */
export function makeKey(id: string, extra: Record<string, unknown> = {}): { key: string; entry: Record<string, unknown> } {
  const key = `sk-test-${randomBytes(16).toString('hex')}`;
  return { key, entry: { id, sha256: hashKey(key), ...extra } };
}

/**
 * One test backend plays many failing scenarios in a row, which passive health
 * would read as a dying endpoint and eject: suites that are not about health
 * get an ejection threshold out of reach. Suites about fleets set `health`
 * themselves, or ask for the config as written (`asConfigured`: the shipped defaults).
 */
function withoutEjection(upstreams: unknown): unknown {
  if (upstreams === null || typeof upstreams !== 'object') return upstreams;
  return Object.fromEntries(Object.entries(upstreams as Record<string, Record<string, unknown>>).map(([name, u]) =>
    [name, u !== null && typeof u === 'object' && !('health' in u) && u.format !== 'demo' ? { ...u, health: { consecutiveFailures: 1000, maxRetryAfterMs: 0 } } : u]));
}

export const silentLogger = () => pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

export async function startGateway(config: Record<string, unknown>, opts: { file?: string; plugins?: PluginDefinition[]; metrics?: { token?: string }; admin?: boolean; logger?: pino.Logger; asConfigured?: boolean } = {}): Promise<TestGateway> {
  const file = opts.file ?? `${process.cwd()}/test/inline.yaml`;
  const upstreams = opts.asConfigured ? config.upstreams : withoutEjection(config.upstreams);
  const validated = validateConfig({ server: { port: 0 }, ...config, upstreams }, file, { ...process.env, PORT: '' }, gatewayConfigCheck(opts.plugins));
  const logger = opts.logger ?? silentLogger();
  const gateway = await createGateway({ config: validated, file }, logger, opts.plugins ?? []);
  const metrics = opts.metrics && await startMetricsServer(gateway.services.metrics!, { host: '127.0.0.1', port: 0, token: opts.metrics.token });
  const admin = opts.admin ? await startAdminListener(gateway.keyHost!, () => gateway.state.runtime, gateway.services, logger, opts.plugins, { host: '127.0.0.1', port: 0 }) : undefined;
  const server = createPublicServer(gateway.app, validated.server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    gateway,
    metrics,
    admin,
    close: async () => {
      await admin?.close();
      await metrics?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    },
  };
}
