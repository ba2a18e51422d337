// Faults after a stream started: a stream cut or stalled after content was
// sent is never passed off as a success; with continueOnFailure it goes on at
// a fallback that takes an assistant prefix, under the same completion id; a
// malformed event is skipped; a complete stream without [DONE] is finished.
import { startFaultBackend, ok, status, type Fault, type FaultBackend } from '../support/fault-backend';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse, type SseResponse } from '../support/http';

const alice = makeKey('alice');
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => { await Promise.all(open.splice(0).map((o) => o.close())); });

const PREFIX_PARAMS = { continue_final_message: true, add_generation_prompt: false };

interface Setup { gw: TestGateway; primary: FaultBackend; fallback: FaultBackend }

/** Model `m` on a primary backend, with `m-fb` on a fallback that takes an assistant prefix. */
async function setup(primaryFault: Fault, opts: { continueOnFailure?: boolean; idleMs?: number; totalMs?: number } = {}): Promise<Setup> {
  const primary = await startFaultBackend('p', 0, primaryFault, ok);
  const fallback = await startFaultBackend('fb');
  open.push(primary, fallback);
  const gw = await startGateway({
    keys: [alice.entry],
    upstreams: {
      p: { url: primary.base, timeouts: { idleMs: opts.idleMs, totalMs: opts.totalMs } },
      fb: { url: fallback.base },
    },
    routes: [
      { model: 'm', upstream: 'p', fallbacks: ['m-fb'], continueOnFailure: opts.continueOnFailure ?? false },
      { model: 'm-fb', upstream: 'fb', assistantPrefix: { params: PREFIX_PARAMS } },
    ],
  });
  open.push(gw);
  return { gw, primary, fallback };
}

const stream = (gw: TestGateway): Promise<SseResponse> =>
  postSse(`${gw.url}/v1/chat/completions`, { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));

const chunks = (res: SseResponse): any[] => res.events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
const text = (res: SseResponse): string => chunks(res).map((c) => c.choices?.[0]?.delta?.content ?? '').join('');

/** After any fault, the gateway still answers the next request whole. */
async function stillHealthy(gw: TestGateway): Promise<void> {
  const res = await stream(gw);
  expect(res.events.at(-1)!.data).toBe('[DONE]');
}

describe('a stream cut mid-answer', () => {
  it('without continuation: what was sent stays, then one error event and no [DONE]', async () => {
    const { gw, primary, fallback } = await setup({ kind: 'cut', after: 2 });
    const res = await stream(gw);
    expect(res.status).toBe(200);
    expect(text(res)).toBe('p-0 p-1 ');
    expect(chunks(res).at(-1).error.reason).toBe('upstream_error');
    expect(res.raw).not.toContain('[DONE]');
    expect([primary.bodies.length, fallback.bodies.length]).toEqual([1, 0]); // never retried once content went out
    await stillHealthy(gw);
  });

  it('with continuation: the fallback goes on from the text sent, under the same id, and the usage counts both parts', async () => {
    const { gw, fallback } = await setup({ kind: 'cut', after: 2 }, { continueOnFailure: true });
    const res = await stream(gw);
    expect(res.events.at(-1)!.data).toBe('[DONE]');
    expect(res.raw).not.toContain('"error"');
    expect(text(res)).toBe('p-0 p-1 fb-0 fb-1 fb-2 ');
    const all = chunks(res);
    expect(new Set(all.map((c) => c.id))).toEqual(new Set(['chatcmpl-p']));
    expect(all.filter((c) => c.choices[0]?.delta?.role !== undefined)).toHaveLength(1);
    const last = all.at(-1);
    expect(last.model).toBe('m-fb');
    expect(last.choices[0].finish_reason).toBe('stop');
    // The fallback's 3 completion tokens, plus the 8 characters already sent (2 tokens estimated).
    expect(last.usage).toEqual({ prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 });
    const asked = fallback.bodies[0];
    expect(asked.messages.at(-1)).toEqual({ role: 'assistant', content: 'p-0 p-1 ' });
    expect(asked).toMatchObject(PREFIX_PARAMS);
    await stillHealthy(gw);
  });

  it('with a fallback that refuses the prefix: the client hears of the original failure, not the refusal', async () => {
    const { gw, fallback } = await setup({ kind: 'cut', after: 2 }, { continueOnFailure: true });
    fallback.script(status(400, { code: 'invalid_prefix', type: 'invalid_request_error' }), ok);
    const res = await stream(gw);
    expect(text(res)).toBe('p-0 p-1 ');
    const error = chunks(res).at(-1).error;
    expect(error.reason).toBe('upstream_error');
    expect(error.code).toBe('upstream_error');
    expect(res.raw).not.toContain('[DONE]');
    expect(fallback.bodies.length).toBe(1);
    await stillHealthy(gw);
  });

  it('never continues on a fallback that does not declare assistantPrefix (refused at load when none does)', async () => {
    await expect(startGateway({
      upstreams: { p: { url: 'http://127.0.0.1:9/v1' } },
      routes: [{ model: 'm', upstream: 'p', fallbacks: ['m-fb'], continueOnFailure: true }, { model: 'm-fb', upstream: 'p' }],
    })).rejects.toThrow(/routes\[0\]\.continueOnFailure: none of its fallbacks is served by a route with assistantPrefix/);
  });
});

describe('a stream that stalls', () => {
  it('ends after idleMs with an upstream_timeout event and no [DONE]', async () => {
    const { gw, primary } = await setup({ kind: 'stall', after: 2 }, { idleMs: 300 });
    const started = Date.now();
    const res = await stream(gw);
    const took = Date.now() - started;
    expect(text(res)).toBe('p-0 p-1 ');
    expect(chunks(res).at(-1).error.reason).toBe('upstream_timeout');
    expect(res.raw).not.toContain('[DONE]');
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(3000);
    expect(primary.bodies.length).toBe(1);
    await stillHealthy(gw);
  });

  it('ends a stream still running at the total deadline with upstream_timeout, never continued', async () => {
    const { gw, fallback } = await setup({ kind: 'ok', words: 20, gapMs: 50 }, { continueOnFailure: true, totalMs: 400 });
    const started = Date.now();
    const res = await stream(gw);
    const took = Date.now() - started;
    expect(chunks(res).at(-1).error.reason).toBe('upstream_timeout');
    expect(res.raw).not.toContain('[DONE]');
    expect(text(res).startsWith('p-0 p-1 ')).toBe(true);
    expect(took).toBeGreaterThanOrEqual(380);
    expect(took).toBeLessThan(900);
    expect(fallback.bodies.length).toBe(0);
  });

  it('goes on at the fallback when the route continues', async () => {
    const { gw } = await setup({ kind: 'stall', after: 1 }, { continueOnFailure: true, idleMs: 300 });
    const res = await stream(gw);
    expect(text(res)).toBe('p-0 fb-0 fb-1 fb-2 ');
    expect(res.events.at(-1)!.data).toBe('[DONE]');
  });
});

describe('streams a client can trust', () => {
  it('skips a malformed event and finishes the stream', async () => {
    const { gw } = await setup({ kind: 'ok', malformed: true });
    const res = await stream(gw);
    expect(text(res)).toBe('p-0 p-1 p-2 ');
    expect(res.events.at(-1)!.data).toBe('[DONE]');
  });

  it('finishes a complete stream that closed without [DONE]: last chunk with usage, then [DONE]', async () => {
    const { gw } = await setup({ kind: 'ok', noDone: true });
    const res = await stream(gw);
    expect(res.events.at(-1)!.data).toBe('[DONE]');
    expect(chunks(res).at(-1).usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
  });

  it('fails over a JSON request and bills the model that answered', async () => {
    const { gw, primary, fallback } = await setup(status(503));
    primary.script(status(503)); // the retry on the same endpoint fails too
    const res = await post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
    expect(res.status).toBe(200);
    expect(res.body.model).toBe('m-fb');
    expect(res.body.choices[0].message.content).toBe('fb-0 fb-1 fb-2 ');
    expect(res.body.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    expect(primary.bodies.length).toBe(2); // one attempt and one retry, then the fallback
    expect(fallback.bodies.length).toBe(1);
  });
});
