// Affinity: requests with the same session header reach the same endpoint
// (its prefix cache), sessions spread over the fleet, and an endpoint that
// leaves rotation moves only its own sessions.
import { startFaultBackend, status, type FaultBackend } from '../support/fault-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post } from '../support/http';

const alice = makeKey('alice');

describe('picker: affinity', () => {
  let members: FaultBackend[];
  let gw: TestGateway;

  beforeAll(async () => {
    members = await Promise.all(['a', 'b', 'c', 'd'].map((n) => startFaultBackend(n)));
    gw = await startGateway({
      keys: [alice.entry],
      upstreams: { f: { endpoints: members.map((m) => ({ url: m.base })), picker: 'affinity', affinity: { header: 'X-Session-Id', loadFactor: 1.25 }, health: { consecutiveFailures: 1, baseEjectionMs: 60_000, maxEjectedShare: 0.5 } } },
      routes: [{ model: 'm', upstream: 'f' }],
    });
  });
  afterAll(async () => { await gw.close(); await Promise.all(members.map((m) => m.close())); });

  /** Which endpoint answered a session's request (the answer's text names it). */
  async function home(session?: string): Promise<string> {
    const res = await post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { ...bearer(alice.key), ...(session ? { 'x-session-id': session } : {}) });
    expect(res.status).toBe(200);
    return (res.body.choices[0].message.content as string).split('-')[0];
  }

  it('keeps each session on one endpoint and spreads sessions over the fleet', async () => {
    const sessions = Array.from({ length: 40 }, (_, i) => `conversation-${i}`);
    const first = new Map<string, string>();
    for (const s of sessions) first.set(s, await home(s));
    for (const s of sessions) expect(await home(s)).toBe(first.get(s));
    expect(new Set(first.values()).size).toBe(4);
    const withoutHeader = new Set<string>();
    for (let i = 0; i < 20; i++) withoutHeader.add(await home());
    expect(withoutHeader.size).toBeGreaterThan(1);
  });

  it('moves only the sessions of an endpoint that leaves rotation', async () => {
    const sessions = Array.from({ length: 40 }, (_, i) => `chat-${i}`);
    const before = new Map<string, string>();
    for (const s of sessions) before.set(s, await home(s));
    const victim = before.get(sessions[0])!;
    const member = members.find((m) => m.name === victim)!;
    member.script(status(500)); // its next request fails over to another endpoint, and it is ejected
    for (const s of sessions) {
      const now = await home(s);
      if (before.get(s) === victim) expect(now).not.toBe(victim);
      else expect(now).toBe(before.get(s));
    }
  });
});
