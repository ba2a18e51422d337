// A throwaway OTLP/HTTP trace collector for the benchmark: it reads each
// export whole and answers 200 at once, counting what it got, so the traced
// gateways are measured against a collector that never holds them back.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TraceSink {
  url: string;
  exports: number;
  bytes: number;
  close(): Promise<void>;
}

export async function startTraceSink(): Promise<TraceSink> {
  const sink = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (c: Buffer) => { sink.bytes += c.length; });
    req.on('end', () => {
      sink.exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(sink, {
    url: `http://127.0.0.1:${port}/v1/traces`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  });
}
