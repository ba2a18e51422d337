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
import { request } from 'node:http';
import { startFaultBackend, ok, status, type Fault, type FaultBackend } from '../support/fault-backend';
import { makeKey, startGateway } from '../support/gateway';
import { bearer } from '../support/http';

const alice = makeKey('alice');
const CLIENT_TIMEOUT_MS = 1_500;

/** What a client makes of an answer: a success, a refusal of this status and code, or a failure. */
interface Outcome { verdict: string; ms: number }

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
  return new Promise((resolve) => {
    let settled = false;
    const done = (verdict: string) => { if (!settled) { settled = true; clearTimeout(timer); resolve({ verdict, ms: Date.now() - started }); } };
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let raw = '';
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
