// The fault suite: for each kind of backend misbehaviour, the same request
// sent straight to the backend and through the gateway with the shipped
// defaults (one upstream, url and format only, in front of one backend that
// serves several models). Through the gateway the client must do at least as
// well: a success where the direct call succeeds; an error of the same class
// where it fails (or a success); no wait beyond the direct call's but for
// what the gateway promises (a short Retry-After waited out, a backoff). Then
// a request for a healthy model on the same backend must succeed.
//
// Two faults would take a minute with the defaults (timeoutMs 60 s): "no
// answer" and "stall" run with timeouts.firstByteMs and timeouts.idleMs of
// 500 ms, and the test's own client gives up after 1.5 s; every other row runs
// on the defaults as shipped.
//
// The outage (S15): a backend down for a few seconds (its server closed, so
// connections are refused, then listening again on the same port), requests
// spaced through and after it, on the shipped defaults alone and with a
// fallback model: after recovery every request is served, none is refused
// that the backend would have served, and the backend is used again at once.
import { request } from 'node:http';
import { startFaultBackend, ok, status, type Fault, type FaultBackend } from '../support/fault-backend';
import { upstreamSchema } from '../../src/config/schema';
import { makeKey, startGateway } from '../support/gateway';
import { bearer } from '../support/http';

const alice = makeKey('alice');
const CLIENT_TIMEOUT_MS = 1_500;

/** What a client makes of an answer: a success, a refusal of this status and code, or a failure; and what it read. */
interface Outcome { verdict: string; ms: number; raw: string }

/** The client's reading of an exchange, as an OpenAI SDK would: a stream succeeds when every event parses and a finish reason came. */
function judge(statusCode: number, raw: string, stream: boolean, ended: boolean): string {
  if (statusCode !== 200) {
    let code: string | undefined;
    try { code = JSON.parse(raw).error?.code ?? undefined; } catch { code = undefined; }
    return statusCode >= 400 && statusCode < 500 ? `refused ${statusCode} ${code}` : 'failed';
  }
  if (!ended) return 'failed';
  if (!stream) {
    try { return JSON.parse(raw).choices?.[0]?.message ? 'success' : 'failed'; } catch { return 'failed'; }
  }
  let finished = false;
  for (const block of raw.split('\n\n')) {
    if (!block.startsWith('data: ') || block === 'data: [DONE]') continue;
    let event: any;
    try { event = JSON.parse(block.slice(6)); } catch { return 'failed'; }
    if (event.error !== undefined) return 'failed';
    if (event.choices?.some((c: any) => c.finish_reason)) finished = true;
  }
  return finished ? 'success' : 'failed';
}

function exchange(url: string, body: object, headers: Record<string, string>): Promise<Outcome> {
  const started = Date.now();
  const stream = (body as { stream?: boolean }).stream === true;
  let raw = '';
  return new Promise((resolve) => {
    let settled = false;
    const done = (verdict: string) => { if (!settled) { settled = true; clearTimeout(timer); resolve({ verdict, ms: Date.now() - started, raw }); } };
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (c: string) => { raw += c; });
      res.on('end', () => done(judge(res.statusCode ?? 0, raw, stream, true)));
      res.on('close', () => done(judge(res.statusCode ?? 0, raw, stream, res.complete)));
    });
    const timer = setTimeout(() => { req.destroy(); done('failed'); }, CLIENT_TIMEOUT_MS);
    req.on('error', () => done('failed'));
    req.end(JSON.stringify(body));
  });
}

/** The gateway's outcome is at least as good as the direct call's. */
function atLeastAsGood(gateway: string, direct: string): boolean {
  return gateway === 'success' || gateway === direct;
}

interface Row {
  fault: string;
  script: Fault[];
  stream: boolean;
  /** Requests in a row (direct, then through the gateway), for faults that show over several. */
  repeat?: number;
  /** Extra time the gateway may take beyond the direct call, for what it promises; default 300 ms. */
  allowMs?: number;
  /** Only where the defaults would take a minute: see the file's head. */
  timeouts?: Record<string, number>;
}

const rateLimited = { code: 'rate_limit_exceeded', type: 'rate_limit_error' };

const rows: Row[] = [
  { fault: '429 with Retry-After', script: [status(429, { retryAfter: '1', ...rateLimited }), ok], stream: true, allowMs: 1_300 },
  { fault: '429 without Retry-After', script: [status(429, rateLimited), ok], stream: true },
  { fault: '500 then 200', script: [status(500), ok], stream: false },
  { fault: 'persistent 503', script: [status(503)], stream: true, repeat: 3 },
  { fault: 'reset', script: [{ kind: 'reset' }], stream: true },
  { fault: 'silence, then hang-up', script: [{ kind: 'hang-up', afterMs: 500 }], stream: true },
  { fault: 'no answer', script: [{ kind: 'silent' }], stream: false, timeouts: { firstByteMs: 500 } },
  { fault: 'slow first token', script: [{ kind: 'ok', firstEventMs: 600 }], stream: true },
  { fault: 'stream cut', script: [{ kind: 'cut', after: 2 }], stream: true },
  { fault: 'stall', script: [{ kind: 'stall', after: 2 }], stream: true, timeouts: { idleMs: 500 } },
  { fault: 'malformed event', script: [{ kind: 'ok', malformed: true }], stream: true },
  { fault: 'no [DONE]', script: [{ kind: 'ok', noDone: true }], stream: true },
  { fault: 'context length', script: [status(400, { code: 'context_length_exceeded', type: 'invalid_request_error' })], stream: false },
  { fault: 'content policy', script: [status(400, { code: 'content_policy_violation', type: 'invalid_request_error' })], stream: true },
  { fault: 'flapping', script: [status(500), ok, status(500), ok, status(500), ok, status(500), ok, ok], stream: false, repeat: 4 },
];

describe('the fault suite: through the gateway with the shipped defaults, never worse than the backend directly', () => {
  let backend: FaultBackend;
  beforeAll(async () => { backend = await startFaultBackend('b'); });
  afterAll(async () => { await backend.close(); });

  it.each(rows.map((r, i) => [r.fault, r, i] as const))('%s', async (_fault, row, i) => {
    const sick = `sick-${i}`;
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { u: { url: backend.base, format: 'openai', ...(row.timeouts && { timeouts: row.timeouts }) } },
      routes: [{ model: '*', upstream: 'u' }],
    }, { asConfigured: true });
    try {
      const body = (model: string) => ({ model, stream: row.stream, messages: [{ role: 'user', content: 'hi' }] });
      const direct: Outcome[] = [];
      const through: Outcome[] = [];
      backend.scriptModel(sick, ...row.script);
      for (let n = 0; n < (row.repeat ?? 1); n++) direct.push(await exchange(`${backend.base}/chat/completions`, body(sick), {}));
      backend.scriptModel(sick, ...row.script);
      for (let n = 0; n < (row.repeat ?? 1); n++) through.push(await exchange(`${gw.url}/v1/chat/completions`, body(sick), bearer(alice.key)));
      direct.forEach((d, n) => {
        const g = through[n];
        expect({ n, gateway: g.verdict, asGood: atLeastAsGood(g.verdict, d.verdict) }).toEqual({ n, gateway: g.verdict, asGood: true });
        expect(g.ms).toBeLessThanOrEqual(d.ms + (row.allowMs ?? 300));
      });
      // A healthy model on the same backend, through the same gateway.
      for (const stream of [false, true]) {
        expect((await exchange(`${gw.url}/v1/chat/completions`, { ...body('healthy'), stream }, bearer(alice.key))).verdict).toBe('success');
      }
    } finally {
      await gw.close();
    }
  });
});

/** How long the backend is down, and how long requests go on after it is back. */
const OUTAGE_MS = 2_500;
const AFTER_MS = 2_000;
const TICK_MS = 200;

interface Tick { at: number; down: boolean; direct: Outcome; gateway: Outcome }

/**
 * Closes the backend, brings it back on its port after OUTAGE_MS, and sends a
 * request every TICK_MS (streamed and not, in turn) until AFTER_MS later:
 * each straight to the backend, then at once through the gateway.
 */
async function throughOutage(backend: FaultBackend, gatewayUrl: string, model: string): Promise<{ ticks: Tick[]; revived: FaultBackend }> {
  const started = Date.now();
  await backend.close();
  let revived: FaultBackend | undefined;
  const back = new Promise<void>((resolve) => setTimeout(() => void startFaultBackend(backend.name, backend.port).then((b) => { revived = b; resolve(); }), OUTAGE_MS));
  const ticks: Tick[] = [];
  for (let n = 0; Date.now() - started < OUTAGE_MS + AFTER_MS; n++) {
    const body = { model, stream: n % 2 === 1, messages: [{ role: 'user', content: 'hi' }] };
    const down = revived === undefined;
    const direct = await exchange(`${backend.base}/chat/completions`, body, {});
    const gateway = await exchange(`${gatewayUrl}/v1/chat/completions`, body, bearer(alice.key));
    ticks.push({ at: Date.now() - started, down, direct, gateway });
    await new Promise((r) => setTimeout(r, Math.max(0, (n + 1) * TICK_MS - (Date.now() - started))));
  }
  await back;
  return { ticks, revived: revived! };
}

/** Each tick as the test reads it: when, what the client got directly and through the gateway. */
const shown = (t: Tick) => ({ at: t.at, direct: t.direct.verdict, gateway: t.gateway.verdict });

describe('the fault suite: a backend down for a few seconds, then healthy (S15)', () => {
  it('the shipped defaults bound an ejection well under a minute, and probe what is out', () => {
    const { health } = upstreamSchema.parse({ url: 'http://127.0.0.1:9/v1', format: 'openai' });
    expect(health.maxEjectionMs).toBeLessThanOrEqual(30_000);
    expect(health.probeIntervalMs).toBeGreaterThan(0);
    expect(health.probeIntervalMs).toBeLessThanOrEqual(5_000);
  });

  it('with the shipped defaults: never worse than direct, and after recovery every request is served', async () => {
    const backend = await startFaultBackend('p');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { u: { url: backend.base, format: 'openai' } },
      routes: [{ model: '*', upstream: 'u' }],
    }, { asConfigured: true });
    let revived: FaultBackend | undefined;
    try {
      const run = await throughOutage(backend, gw.url, 'm');
      revived = run.revived;
      const { ticks } = run;
      expect(ticks.filter((t) => t.down && t.direct.verdict === 'failed').length).toBeGreaterThanOrEqual(5); // the outage was seen
      for (const t of ticks) {
        expect({ ...shown(t), asGood: atLeastAsGood(t.gateway.verdict, t.direct.verdict) }).toEqual({ ...shown(t), asGood: true });
        expect(t.gateway.ms).toBeLessThanOrEqual(t.direct.ms + 300);
      }
      const after = ticks.filter((t) => !t.down && t.direct.verdict === 'success');
      expect(after.length).toBeGreaterThanOrEqual(5);
      expect(after.map(shown)).toEqual(after.map((t) => ({ ...shown(t), gateway: 'success' })));
    } finally {
      await gw.close();
      await revived?.close();
    }
  });

  it('with a fallback model: every request served throughout, and the backend used again soon after it is back', async () => {
    const backend = await startFaultBackend('p');
    const spare = await startFaultBackend('f');
    const gw = await startGateway({
      keys: [alice.entry],
      upstreams: { u: { url: backend.base, format: 'openai' }, v: { url: spare.base, format: 'openai' } },
      routes: [{ model: 'big', upstream: 'u', fallbacks: ['small'] }, { model: 'small', upstream: 'v' }],
    }, { asConfigured: true });
    let revived: FaultBackend | undefined;
    try {
      const run = await throughOutage(backend, gw.url, 'big');
      revived = run.revived;
      const { ticks } = run;
      expect(ticks.map(shown)).toEqual(ticks.map((t) => ({ ...shown(t), gateway: 'success' })));
      // Back on its port, the backend answers again within a probe's interval (1 s) and a tick.
      const backAt = ticks.find((t) => !t.down)!.at;
      const late = ticks.filter((t) => t.at > backAt + 1_000 + TICK_MS);
      expect(late.length).toBeGreaterThanOrEqual(3);
      expect(late.map((t) => ({ at: t.at, by: t.gateway.raw.includes('p-0') ? 'p' : 'other' }))).toEqual(late.map((t) => ({ at: t.at, by: 'p' })));
    } finally {
      await gw.close();
      await revived?.close();
      await spare.close();
    }
  });
});
