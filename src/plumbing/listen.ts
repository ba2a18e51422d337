// Binds a listener. When it cannot, the error says which listener and which
// address, in one line an operator can act on:
//   cannot listen on 127.0.0.1:9464 for metrics (server.metrics): address already in use
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export class ListenError extends Error {
  constructor(message: string, readonly code: string | undefined) {
    super(message);
    this.name = 'ListenError';
  }
}

const hostPort = (host: string, port: number): string => `${host.includes(':') ? `[${host}]` : host}:${port}`;

function why(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'EADDRINUSE': return 'address already in use';
    case 'EACCES': return 'permission denied (ports below 1024 need privileges)';
    case 'EADDRNOTAVAIL': return 'no such address on this machine';
    case 'ENOTFOUND':
    case 'EAI_AGAIN': return 'the host name does not resolve';
    default: return err.message;
  }
}

/** `what` names the listener for the operator, e.g. "the public API (server.host, server.port)". */
export function listen(server: Server, port: number, host: string, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => reject(new ListenError(`cannot listen on ${hostPort(host, port)} for ${what}: ${why(err)}`, err.code));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

/** The base URL a bound server answers on, e.g. http://127.0.0.1:8080. */
export function listeningUrl(server: Server): string {
  const addr = server.address() as AddressInfo;
  return `http://${hostPort(addr.address, addr.port)}`;
}

/** Closes a server and every connection it holds, at once (no drain). */
export const closeNow = (server: Server): Promise<void> => new Promise<void>((resolve) => {
  server.close(() => resolve());
  server.closeAllConnections();
});

/** A bound listener: its server, base URL (e.g. http://127.0.0.1:9464) and a close that ends it at once. */
export interface Listener {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** `listen`, then the listener. */
export async function bind(server: Server, port: number, host: string, what: string): Promise<Listener> {
  await listen(server, port, host, what);
  return { server, url: listeningUrl(server), close: () => closeNow(server) };
}
