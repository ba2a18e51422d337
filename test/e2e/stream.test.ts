// Stream framing, n > 1, a backend failing mid-stream, and a client leaving.
import { request } from 'node:http';
import { z } from 'zod';
import type { Outcome, PluginDefinition, Usage } from '../../src/contract/plugin';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, postSse, type SseResponse } from '../support/http';
import { until } from '../support/wait';

interface Finished { model?: string; outcome: Outcome; usage?: Usage }
const finished: Finished[] = [];
const recorder: PluginDefinition<Record<string, never>> = {
  name: 'recorder',
  schema: z.strictObject({}),
  create: () => ({ onFinish: (ctx, outcome) => void finished.push({ model: ctx.model, outcome, usage: ctx.usage }) }),
};

/** Checks the interface's framing and returns the parsed chunks (without [DONE]). */
function framedChunks(res: SseResponse): any[] {
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
  expect(res.headers['x-accel-buffering']).toBe('no');
  expect(res.headers['content-encoding']).toBeUndefined();
  const blocks = res.raw.split('\n\n');
  expect(blocks.pop()).toBe('');
  for (const block of blocks) expect(block).toMatch(/^data: [^\n]+$/);
  expect(blocks.at(-1)).toBe('data: [DONE]');
  expect(blocks.filter((b) => b === 'data: [DONE]')).toHaveLength(1);
  return blocks.slice(0, -1).map((b) => JSON.parse(b.slice(6)));
}

function expectChunkShape(chunks: any[], model: string, n: number): void {
  const ids = new Set(chunks.map((c) => c.id));
  expect(ids.size).toBe(1);
  expect([...ids][0]).toEqual(expect.any(String));
  for (const c of chunks) expect(c).toMatchObject({ object: 'chat.completion.chunk', model, created: expect.any(Number) });
  expect(chunks.every((c) => Number.isInteger(c.created))).toBe(true);
  for (let index = 0; index < n; index++) {
    const mine = chunks.flatMap((c) => c.choices.filter((ch: any) => ch.index === index));
    expect(mine[0].delta.role).toBe('assistant');
    expect(mine.slice(1, -1).every((ch: any) => ch.finish_reason === null && !('role' in ch.delta))).toBe(true);
    expect(mine.at(-1)).toEqual({ index, delta: {}, finish_reason: 'stop' });
  }
  const last = chunks.at(-1);
  expect(last.choices.map((ch: any) => ch.index)).toEqual(Array.from({ length: n }, (_, i) => i));
  expect(last.usage).toEqual({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) });
  expect(chunks.slice(0, -1).some((c) => c.usage)).toBe(false);
}

describe.each(['openai', 'native'] as const)('streams, %s format', (format) => {
  let backend: Backend;
  let gw: TestGateway;
  const alice = makeKey('alice');
  const body = (model: string, extra: Record<string, unknown> = {}) => ({ model, stream: true, messages: [{ role: 'user', content: 'hi' }], ...extra });
  const stream = (version: string, b: unknown, abortAfter?: number) => postSse(`${gw.url}/${version}/chat/completions`, b, { ...bearer(alice.key), 'accept-encoding': 'gzip, br' }, abortAfter);

  beforeAll(async () => {
    backend = await startBackend({ format, events: 4, gapMs: 10 });
    gw = await startGateway({ keys: [alice.entry], upstreams: { b: { url: backend.base, format } }, routes: [{ model: '*', upstream: 'b' }], plugins: [{ name: 'recorder' }] }, { plugins: [recorder] });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  it.each(['v1', 'v2'])('frames data-only events with one id, role first, empty delta + finish_reason + usage last, then [DONE] (%s)', async (version) => {
    const chunks = framedChunks(await stream(version, body('ok-a')));
    expectChunkShape(chunks, 'ok-a', 1);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('alpha beta gamma delta');
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 });
  });

  it('streams n > 1 choices, each framed the same way', async () => {
    const chunks = framedChunks(await stream('v1', body('ok-n', { model_params: { n: 3 } })));
    expectChunkShape(chunks, 'ok-n', 3);
    expect(chunks.at(-1).usage.completion_tokens).toBe(12);
  });

  it('reports usage and outcome to the finish hooks', async () => {
    finished.length = 0;
    await stream('v2', body('ok-usage'));
    await until(() => finished.length === 1, 'finished.length === 1', 500);
    expect(finished[0]).toMatchObject({ model: 'ok-usage', outcome: { status: 200, reason: null, aborted: false }, usage: { total_tokens: 15, estimated: false } });
  });

  it.each(['break-a', 'trunc-a', 'fail-a'])('ends a stream the backend broke off (%s) with one error event and no [DONE]', async (model) => {
    finished.length = 0;
    const res = await stream('v1', body(model));
    expect(res.status).toBe(200);
    const data = res.events.map((e) => e.data);
    expect(data).not.toContain('[DONE]');
    expect(data).toHaveLength(3);
    expect(data.slice(0, 2).map((d) => JSON.parse(d).choices[0].delta.content)).toEqual(['alpha', ' beta']);
    const error = JSON.parse(data[2]);
    expect(Object.keys(error)).toEqual(['error']);
    expect(error.error).toMatchObject({ reason: 'upstream_error', status: 502, message: expect.stringMatching(/.{10,}/) });
    expect(res.raw.endsWith(`data: ${data[2]}\n\n`)).toBe(true);
    await until(() => finished.length === 1, 'finished.length === 1', 500);
    expect(finished[0].outcome).toMatchObject({ status: 502, reason: 'upstream_error', aborted: false });
  });

  it('ends a stream whose backend falls silent longer than timeoutMs with an upstream_timeout event', async () => {
    const stalling = await startBackend({ format, events: 4, gapMs: 400 });
    const g = await startGateway({ keys: [alice.entry], upstreams: { s: { url: stalling.base, format, timeoutMs: 150 } }, routes: [{ model: '*', upstream: 's' }] });
    try {
      const res = await postSse(`${g.url}/v1/chat/completions`, body('ok-stall'), bearer(alice.key));
      const data = res.events.map((e) => e.data);
      expect(data).toHaveLength(2);
      expect(JSON.parse(data[0]).choices[0].delta.content).toBe('alpha');
      expect(JSON.parse(data[1]).error).toMatchObject({ reason: 'upstream_timeout', status: 504 });
      expect(res.events[1].at - res.events[0].at).toBeLessThan(380);
    } finally {
      await g.close();
      await stalling.close();
    }
  });

  it('aborts the backend request at once when the client leaves mid-stream', async () => {
    const slow = await startBackend({ format, events: 100, gapMs: 50 });
    const g = await startGateway({ keys: [alice.entry], upstreams: { s: { url: slow.base, format } }, routes: [{ model: '*', upstream: 's' }], plugins: [{ name: 'recorder' }] }, { plugins: [recorder] });
    try {
      finished.length = 0;
      const res = await postSse(`${g.url}/v1/chat/completions`, body('ok-long'), bearer(alice.key), 2);
      const left = Date.now();
      expect(res.events).toHaveLength(2);
      await until(() => slow.aborted === 1, 'slow.aborted === 1', 1000);
      expect(Date.now() - left).toBeLessThan(150);
      expect(slow.sentAt[0].length).toBeLessThan(10);
      await until(() => finished.length === 1, 'finished.length === 1', 500);
      expect(finished[0].outcome).toMatchObject({ status: 499, reason: 'client_closed', aborted: true });
    } finally {
      await g.close();
      await slow.close();
    }
  });

  it('aborts the backend request when the client leaves before the answer starts', async () => {
    const slow = await startBackend({ format, slowMs: 2000 });
    const g = await startGateway({ keys: [alice.entry], upstreams: { s: { url: slow.base, format } }, routes: [{ model: '*', upstream: 's' }] });
    try {
      const payload = JSON.stringify(body('slow-a'));
      const req = request(`${g.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(alice.key) } });
      req.on('error', () => undefined);
      req.end(payload);
      await until(() => slow.requests.length === 1, 'slow.requests.length === 1', 1000);
      const left = Date.now();
      req.destroy();
      await until(() => slow.aborted === 1, 'slow.aborted === 1', 1000);
      expect(Date.now() - left).toBeLessThan(150);
    } finally {
      await g.close();
      await slow.close();
    }
  });
});
