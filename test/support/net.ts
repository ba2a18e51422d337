// Loopback helpers for the suite's setup and the tests: a free port, and a Redis PING.
import { createConnection, createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** True when a Redis server answers PING on 127.0.0.1:port within 300 ms. */
export function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(300, () => { socket.destroy(); resolve(false); });
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (d) => { reply += d.toString(); if (reply.includes('\r\n')) { socket.end(); resolve(reply.startsWith('+PONG')); } });
    socket.on('error', () => resolve(false));
  });
}
