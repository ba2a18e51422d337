// One-purpose loopback backends for the fleet suites: a server that answers
// each request by a handler, a chat completion to answer with, a backend that
// always fails, a port nothing listens on, and an endpoint's up gauge.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startJsonServer } from './json-server';
import { freePort } from './net';
import type { TestGateway } from './gateway';

export interface Served { url: string; port: number; close(): Promise<void> }

/** A one-purpose backend on loopback: `handle` answers each request once its body is read. */
export async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void, port = 0): Promise<Served> {
  const s = await startJsonServer((req, res) => handle(req, res), port);
  return { url: s.base, port: s.port, close: s.close };
}

/** A chat completion whose message says `content`. */
export function answer(res: ServerResponse, content: string): void {
  const body = JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** A backend that always answers `status` (counting what it saw). */
export async function failing(status: number): Promise<Served & { seen: () => number }> {
  let seen = 0;
  const served = await serve((_req, res) => { seen++; res.writeHead(status, { 'content-type': 'application/json' }); res.end('{"error":{"message":"busy"}}'); });
  return { ...served, seen: () => seen };
}

/** An upstream url on a loopback port nothing listens on (until a test serves on it). */
export async function closedPort(): Promise<{ url: string; port: number }> {
  const port = await freePort();
  return { url: `http://127.0.0.1:${port}/v1`, port };
}

/** sluice_upstream_endpoint_up of the gateway's one endpoint. */
export async function endpointUp(gw: TestGateway): Promise<number | undefined> {
  const gauge = gw.gateway.services.metrics!.getSingleMetric('sluice_upstream_endpoint_up');
  return gauge === undefined ? undefined : (await gauge.get()).values[0]?.value;
}
