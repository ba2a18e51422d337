// Active health checks: an endpoint whose /health fails leaves the rotation
// and comes back once a check passes; the checks carry the upstream's
// configured headers, so a /health behind authentication keeps it in.
import { makeKey, startGateway } from '../support/gateway';
import { bearer, post } from '../support/http';
import { until } from '../support/wait';
import { answer, endpointUp, serve } from '../support/fleet-servers';

describe('active health checks', () => {
  it('takes an endpoint whose /health fails out of rotation, and brings it back when it passes', async () => {
    let healthy = false;
    let completions = 0;
    const server = await serve((req, res) => {
      if (req.url === '/health') { res.writeHead(healthy ? 200 : 503); return void res.end(); }
      completions++;
      answer(res, 'hi');
    });
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { u: { url: server.url, healthCheck: { path: '/health', intervalMs: 100 }, health: { consecutiveFailures: 2, baseEjectionMs: 60_000 } } },
      routes: [{ model: '*', upstream: 'u' }],
    });
    const send = () => post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
    try {
      await until(async () => (await endpointUp(gw)) === 0, 'two failed checks to eject it');
      expect(completions).toBe(0); // checks only, never a completion
      // Out of rotation, but nothing else can serve: the request is tried there anyway, and served.
      expect((await send()).status).toBe(200);
      expect(completions).toBe(1);
      await until(async () => (await endpointUp(gw)) === 0, 'the checks to eject it again');
      healthy = true;
      await until(async () => (await endpointUp(gw)) === 1, 'a passing check to bring it back');
      expect((await send()).status).toBe(200);
    } finally {
      await gw.close();
      await server.close();
    }
  });
});

describe('active health checks behind authentication', () => {
  it('send the upstream\'s configured headers, so a /health that needs them keeps the endpoint in', async () => {
    const checks: Array<string | undefined> = [];
    const server = await serve((req, res) => {
      if (req.url === '/health') {
        checks.push(req.headers.authorization);
        res.writeHead(req.headers.authorization === 'Bearer upstream-secret' ? 200 : 401);
        return void res.end();
      }
      answer(res, 'hi');
    });
    const alice = makeKey('alice');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { u: { url: server.url, headers: { Authorization: 'Bearer upstream-secret' }, healthCheck: { path: '/health', intervalMs: 100 }, health: { consecutiveFailures: 2, baseEjectionMs: 60_000 } } },
      routes: [{ model: '*', upstream: 'u' }],
    });
    try {
      await until(() => checks.length >= 3, 'three health checks');
      expect(checks.slice(0, 3)).toEqual(Array(3).fill('Bearer upstream-secret'));
      expect((await post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key))).status).toBe(200);
    } finally {
      await gw.close();
      await server.close();
    }
  });
});
