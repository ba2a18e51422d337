// Loopback helpers for the suite's setup and the tests: a free port, and a Redis PING.
import { readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';

/**
 * The first port the kernel hands out for a listen on port 0. A port given
 * here is below it: one taken from that range could be handed, between its
 * release and its use, to any `port: 0` listener (a gateway's own metrics
 * listener, say), and the test would fail with "address already in use".
 */
function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}
const LOW = Math.max(ephemeralLow() - 12_000, 1025);
const HIGH = Math.max(ephemeralLow() - 1, LOW);
/** Ports this process has handed out, never handed out again. */
const given = new Set<number>();

const listens = (port: number): Promise<boolean> => new Promise((resolve) => {
  const s = createServer();
  s.once('error', () => resolve(false));
  s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
});

/** A port free on 127.0.0.1 now, outside the kernel's ephemeral range and not given before by this process. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (given.has(port) || !(await listens(port))) continue;
    given.add(port);
    return port;
  }
  throw new Error(`no free port between ${LOW} and ${HIGH} after 200 tries`);
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
