// The floor any Node gateway pays: a node:http pass-through with a keep-alive
// agent, no parsing and no policy. Run: node dist/bench/bare-proxy.js TARGET_PORT
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

const target = Number(process.argv[2]);
const agent = new Agent({ keepAlive: true, maxSockets: 1024 });

const server = createServer((req, res) => {
  const upstream = request({ host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers, agent }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  upstream.on('error', () => { if (!res.headersSent) res.writeHead(502); res.end(); });
  res.on('close', () => { if (!res.writableFinished) upstream.destroy(); });
  req.pipe(upstream);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
