import { openaiFormat } from '../../src/proxy/formats/openai';
import { toUnixSeconds, withoutNulls } from '../../src/proxy/formats/format';
import type { Context } from '../../src/pipeline/context';
import type { GatewayError } from '../../src/errors';

// The format reads only the request part of a context and writes ctx.usage.
const chatCtx = (model_params: Record<string, unknown> = {}, stream = false) =>
  ({ model: 'client-model', stream, streamedChars: 0, chat: { model: 'client-model', stream, model_params, messages: [{ role: 'user', content: '12345678' }] } }) as unknown as Context;
const imageCtx = () => ({ model: 'img', stream: false, image: { model: 'img', prompt: 'p', model_params: { n: 2, size: null } } }) as unknown as Context;

/** Feeds backend events to a fresh transformer and returns what it emitted. */
function run(events: Array<object | string>, ctx = chatCtx({}, true)): { out: any[]; done: boolean; ctx: Context } {
  const t = openaiFormat.streamTransformer(ctx, 'vllm');
  const out: any[] = [];
  for (const e of events) t.push(typeof e === 'string' ? e : JSON.stringify(e), (p) => out.push(p === '[DONE]' ? p : JSON.parse(p)));
  return { out, done: t.done, ctx };
}

const chunk = (choices: object[], extra: object = {}) => ({ id: 'b-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'Qwen', choices, ...extra });

describe('openai format: request body', () => {
  it('flattens model_params, drops nulls, and names the upstream model', () => {
    const body = JSON.parse(openaiFormat.requestBody(chatCtx({ temperature: 0.2, top_p: null, max_tokens: 9, model: 'sneaky', stream: true }), 'Qwen'));
    expect(body).toEqual({ temperature: 0.2, max_tokens: 9, model: 'Qwen', messages: [{ role: 'user', content: '12345678' }] });
  });

  it('asks a stream for usage, keeping other stream_options', () => {
    const body = JSON.parse(openaiFormat.requestBody(chatCtx({ stream_options: { continuous_usage_stats: true, include_usage: false } }, true), 'Qwen'));
    expect(body).toMatchObject({ stream: true, stream_options: { continuous_usage_stats: true, include_usage: true } });
  });

  it('sends image params at the top level', () => {
    expect(JSON.parse(openaiFormat.requestBody(imageCtx(), 'sdxl'))).toEqual({ n: 2, model: 'sdxl', prompt: 'p' });
  });
});

describe('openai format: JSON answers', () => {
  it('reshapes a chat answer: client model id, integer created, usage estimated when missing', () => {
    const ctx = chatCtx();
    const out = JSON.parse(openaiFormat.respondJson(ctx, JSON.stringify({ created: '1700000000', model: 'Qwen', choices: [{ message: { content: 'abcd' } }] }), 'vllm'));
    expect(out).toEqual({
      id: expect.stringMatching(/^chatcmpl-/), object: 'chat.completion', created: 1_700_000_000, model: 'client-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'abcd' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
    });
    expect(ctx.usage?.estimated).toBe(true);
  });

  it('gives an image answer an id and keeps only the URLs', () => {
    const out = JSON.parse(openaiFormat.respondJson(imageCtx(), JSON.stringify({ created: 5.7, data: [{ url: 'u1', revised_prompt: 'x' }] }), 'sd'));
    expect(out).toEqual({ id: expect.stringMatching(/^img-/), created: 5, data: [{ url: 'u1' }] });
  });

  it.each([
    ['not JSON', 'oops', chatCtx()],
    ['no choices', '{"id":"x"}', chatCtx()],
    ['images without URLs', '{"data":[{"b64_json":"AAAA"}]}', imageCtx()],
  ])('refuses an answer with %s as upstream_error', (_what, text, ctx) => {
    expect(() => openaiFormat.respondJson(ctx, text, 'vllm')).toThrow(expect.objectContaining<Partial<GatewayError>>({ reason: 'upstream_error', status: 502 }));
  });
});

describe('openai format: stream', () => {
  it.each(['null', '42', '"text"'])('calls an event that is JSON but not an object (%s) a bad backend answer', (data) => {
    const transformer = openaiFormat.streamTransformer(chatCtx({}, true), 'b');
    let err: GatewayError | undefined;
    try { transformer.push(data, () => undefined); } catch (e) { err = e as GatewayError; }
    expect(err).toMatchObject({ reason: 'upstream_error', status: 502, details: { kind: 'stream', upstream: 'b' } });
  });

  it('folds a vLLM stream into the interface\'s chunks', () => {
    const { out, done, ctx } = run([
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'Hel' }, finish_reason: null }], { usage: null }),
      chunk([{ index: 0, delta: { content: 'lo' }, finish_reason: 'length' }]),
      chunk([], { usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }),
      '[DONE]',
    ]);
    expect(done).toBe(true);
    expect(out.at(-1)).toBe('[DONE]');
    const chunks = out.slice(0, -1);
    expect(chunks.map((c) => c.choices)).toEqual([
      [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }],
      [{ index: 0, delta: { content: 'lo' }, finish_reason: null }],
      [{ index: 0, delta: {}, finish_reason: 'length' }],
    ]);
    for (const c of chunks) expect(c).toMatchObject({ id: 'b-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'client-model' });
    expect(chunks.filter((c) => 'usage' in c)).toEqual([chunks.at(-1)]);
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect(ctx.usage).toMatchObject({ total_tokens: 5, estimated: false });
  });

  it('adds the role to each choice\'s first chunk and closes every choice, in index order', () => {
    const { out } = run([
      chunk([{ index: 1, delta: { content: 'b' }, finish_reason: null }]),
      chunk([{ index: 0, delta: { content: 'a' }, finish_reason: null }, { index: 1, delta: { content: 'c' }, finish_reason: 'stop' }]),
      chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
      '[DONE]',
    ]);
    expect(out[0].choices).toEqual([{ index: 1, delta: { role: 'assistant', content: 'b' }, finish_reason: null }]);
    expect(out[1].choices).toEqual([{ index: 0, delta: { role: 'assistant', content: 'a' }, finish_reason: null }, { index: 1, delta: { content: 'c' }, finish_reason: null }]);
    expect(out[2].choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }, { index: 1, delta: {}, finish_reason: 'stop' }]);
    expect(out[2].usage).toEqual({ prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 });
  });

  it('gives a stream without backend ids one id of its own, the same in every chunk', () => {
    const { out } = run([{ choices: [{ index: 0, delta: { content: 'x' } }] }, { choices: [{ index: 0, delta: { content: 'y' } }] }, '[DONE]']);
    const ids = new Set(out.slice(0, -1).map((c) => c.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^chatcmpl-/);
    expect(out.slice(0, -1).every((c) => Number.isInteger(c.created))).toBe(true);
  });

  it('still ends with the interface\'s last chunk when the backend sent nothing before [DONE]', () => {
    const { out } = run(['[DONE]']);
    expect(out).toEqual([expect.objectContaining({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: expect.any(Object) }), '[DONE]']);
  });

  it.each([['an event that is not JSON', 'nope'], ['an error event', { error: { message: 'overloaded' } }]])('fails on %s with upstream_error', (_what, event) => {
    expect(() => run([chunk([{ index: 0, delta: { content: 'a' } }]), event])).toThrow(expect.objectContaining<Partial<GatewayError>>({ reason: 'upstream_error' }));
  });

  it('is not done until [DONE]', () => {
    expect(run([chunk([{ index: 0, delta: { content: 'a' }, finish_reason: 'stop' }])]).done).toBe(false);
  });
});

describe('format helpers', () => {
  it('withoutNulls drops null and undefined only', () => {
    expect(withoutNulls({ a: null, b: undefined, c: 0, d: false, e: '' })).toEqual({ c: 0, d: false, e: '' });
  });

  it('toUnixSeconds takes integers, numeric strings, or now', () => {
    expect(toUnixSeconds(1_700_000_000.9)).toBe(1_700_000_000);
    expect(toUnixSeconds('1700000000')).toBe(1_700_000_000);
    const now = Math.floor(Date.now() / 1000);
    for (const v of [undefined, 'yesterday', Number.NaN, null]) expect(Math.abs(toUnixSeconds(v) - now)).toBeLessThanOrEqual(1);
  });
});
