// An MCP server that writes its answers byte by byte as a test tells it, for
// what the SDK's server never sends: JSON escapes where no serializer puts
// them (\u0062), an event split across writes, a result of 50 MB streamed
// from one reused buffer (so the test process's memory shows the gateway's,
// not the server's). It answers initialize itself; every other request goes
// to the test's `answer`, with the request's id and its params (a GET as
// method "GET", its Last-Event-ID as params.lastEventId).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RawAnswer = (message: { id: number | string; method: string; params: any }, res: ServerResponse) => void;

export interface RawMcpServer {
  url: string;
  /** Each tools/call's params, as the server received them. */
  calls: any[];
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage): Promise<string> => new Promise((resolve, reject) => {
  let text = '';
  req.setEncoding('utf8').on('data', (c: string) => { text += c; }).on('end', () => resolve(text)).on('error', reject);
});

export async function startRawMcpServer(answer: RawAnswer): Promise<RawMcpServer> {
  const calls: any[] = [];
  const http: Server = createServer((req, res) => void readBody(req).then((text) => {
    if (req.method === 'GET') return answer({ id: '', method: 'GET', params: { lastEventId: req.headers['last-event-id'] } }, res);
    const message = JSON.parse(text);
    if (message.id === undefined) return void res.writeHead(202).end();
    if (message.method === 'initialize') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } } }));
    }
    if (message.method === 'tools/call') calls.push(message.params);
    answer(message, res);
  }));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    calls,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * Writes `prefix`, then `bytes` of filler from one reused buffer as the
 * client takes them, then `suffix`; stops when the other end goes.
 */
export async function writeLarge(res: ServerResponse, prefix: string, bytes: number, suffix: string): Promise<void> {
  const block = Buffer.alloc(1024 * 1024, 'a');
  res.write(prefix);
  for (let sent = 0; sent < bytes && !res.destroyed; sent += block.length) {
    if (!res.write(sent + block.length <= bytes ? block : block.subarray(0, bytes - sent))) {
      await new Promise<void>((resolve) => {
        const go = (): void => { res.off('drain', go).off('close', go); resolve(); };
        res.once('drain', go).once('close', go);
      });
    }
  }
  if (!res.destroyed) res.end(suffix);
}
