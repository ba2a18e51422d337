// A loopback forwarder that adds `Authorization: Bearer <key>` to every
// request and changes nothing else: for a client that cannot be given a
// header (the MCP conformance CLI takes only a URL). Method, path, headers
// (Host included) and body go on as they came; the answer's status, headers
// and body come back as they arrive, an event stream event by event.
//   const fwd = await startBearerForwarder(gw.url, key);   // fwd.url + '/mcp/everything'
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BearerForwarder {
  url: string;
  close(): Promise<void>;
}

export async function startBearerForwarder(target: string, key: string): Promise<BearerForwarder> {
  const to = new URL(target);
  const server: Server = createServer((req, res) => {
    const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders();
      answer.pipe(res);
      answer.once('error', () => res.destroy());
    });
    out.once('error', () => res.destroy());
    res.once('close', () => { if (!res.writableFinished) out.destroy(); });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
