// A backend whose stream event never ends (64 KB chunks, no blank line) costs
// the gateway memory and CPU in proportion to the bytes it reads, up to the
// event cap (upstreams.*.maxEventBytes), and the client gets its error. The
// gateway runs as its own process, so its peak RSS (VmHWM, reset before each
// request) and CPU time (utime + stime) are its own, read from /proc.
import { readFileSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { startJsonServer, type JsonServer } from '../support/json-server';
import { makeKey } from '../support/gateway';
import { spawnGateway, type GatewayProcess } from '../support/process';
import { bearer, post } from '../support/http';
import { expectError } from '../support/errors';

const MB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'y');
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** Writes 64 KB chunks of one event that never ends, as fast as the gateway reads them, until it hangs up (or `limit` bytes). */
function endlessEvent(res: ServerResponse, limit: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write('data: ');
  let sent = 0;
  const pump = (): void => {
    while (!res.destroyed && sent < limit) {
      sent += CHUNK.length;
      if (!res.write(CHUNK)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end();
  };
  pump();
}

/** Peak RSS since the last reset and CPU time so far, in bytes and seconds (Linux /proc). */
function usage(pid: number): { peakRss: number; rss: number; cpu: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { peakRss: kb('VmHWM'), rss: kb('VmRSS'), cpu: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND };
}

describe('an event that never ends', () => {
  let backend: JsonServer;
  let gw: GatewayProcess;
  const alice = makeKey('alice');

  beforeAll(async () => {
    backend = await startJsonServer((_req, res) => endlessEvent(res, 64 * MB));
    gw = await spawnGateway([
      'server: { metrics: { port: 0 } }',
      `keys: [${JSON.stringify(alice.entry)}]`,
      'upstreams:',
      `  small: { url: "${backend.base}", maxEventBytes: 4mb }`,
      `  large: { url: "${backend.base}", maxEventBytes: 16mb }`,
      'routes:',
      '  - { model: small, upstream: small }',
      '  - { model: large, upstream: large }',
    ].join('\n'));
  });
  afterAll(async () => { gw.kill(); await backend.close(); });

  /** One endless event through the gateway: the client's answer, the gateway's RSS growth and CPU time for it. */
  async function refuse(model: string): Promise<{ growth: number; cpu: number }> {
    writeFileSync(`/proc/${gw.pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
    const before = usage(gw.pid);
    const res = await post(`${gw.url}/v1/chat/completions`, { model, stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
    // Nothing reached the client before the event was refused: the answer is still an error response.
    expectError(res, 502, 'upstream_error', null);
    const after = usage(gw.pid);
    return { growth: after.peakRss - before.rss, cpu: after.cpu - before.cpu };
  }

  it('refuses it at the cap with a 502, its memory bounded and its CPU time linear in the bytes read', async () => {
    await refuse('small'); // warms the code paths
    const small = await refuse('small');
    const large = await refuse('large');
    // Peak memory a few times the cap: the chunks read (buffers outside the heap, freed when the collector
    // runs), the text kept, then its join; 16 MB of text is 16 MB of heap. Here 22 to 38 MB in eight runs,
    // once 70 MB on a busy machine whose collector had not run yet; the quadratic parser grew 258 MB.
    expect(large.growth).toBeLessThan(6 * 16 * MB);
    // Four times the bytes, about four times the CPU (quadratic work would be sixteen: it took 6 s); the floor is the clock's granularity.
    expect(large.cpu).toBeLessThan(10 * Math.max(small.cpu, 0.1));
  });
});
