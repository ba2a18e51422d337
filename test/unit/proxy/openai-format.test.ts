import { openaiFormat } from '../../../src/proxy/formats/openai';
import { toUnixSeconds, withoutNulls } from '../../../src/proxy/formats/format';
import type { Context } from '../../../src/pipeline/context';
import type { GatewayError } from '../../../src/contract/errors';

// The format reads only the request part of a context; its stream transformer says what the answer cost (its usage), which the relay records.
const chatCtx = (model_params: Record<string, unknown> = {}, stream = false) =>
  ({ model: 'client-model', stream, forwarding: { streamedChars: 0, skippedEvents: 0 }, texts: ['12345678'], chat: { model: 'client-model', stream, model_params, messages: [{ role: 'user', content: '12345678' }], texts: ['12345678'] } }) as unknown as Context;
const imageCtx = () => ({ model: 'img', stream: false, texts: ['p'], image: { model: 'img', prompt: 'p', model_params: { n: 2, size: null }, texts: ['p'] } }) as unknown as Context;

/** Feeds backend events to a fresh transformer and returns what it emitted. */
function run(events: Array<object | string>, ctx = chatCtx({}, true)): { out: any[]; done: boolean; ctx: Context; usage: unknown } {
  const t = openaiFormat.streamTransformer(ctx, 'vllm');
  const out: any[] = [];
  for (const e of events) t.push(typeof e === 'string' ? e : JSON.stringify(e), (p) => out.push(p === '[DONE]' ? p : JSON.parse(p)));
  return { out, done: t.done, ctx, usage: t.usage };
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
    const answer = openaiFormat.respondJson(chatCtx(), JSON.stringify({ created: '1700000000', model: 'Qwen', choices: [{ message: { content: 'abcd' } }] }), 'vllm');
    const out = JSON.parse(answer.body);
    expect(out).toEqual({
      id: expect.stringMatching(/^chatcmpl-/), object: 'chat.completion', created: 1_700_000_000, model: 'client-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'abcd' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
    });
    expect(answer.usage).toEqual({ prompt_tokens: 2, completion_tokens: 1, total_tokens: 3, estimated: true });
  });

  it('gives an image answer an id and keeps each image object as the backend sent it', () => {
    const out = JSON.parse(openaiFormat.respondJson(imageCtx(), JSON.stringify({ created: 5.7, data: [{ url: 'u1', revised_prompt: 'x' }, { b64_json: 'AAAA' }] }), 'sd').body);
    expect(out).toEqual({ id: expect.stringMatching(/^img-/), created: 5, data: [{ url: 'u1', revised_prompt: 'x' }, { b64_json: 'AAAA' }] });
  });

  it('keeps the fields the interface does not define: system_fingerprint, logprobs, tool_calls, usage details', () => {
    const logprobs = { content: [{ token: 'a', logprob: -0.1, bytes: [97], top_logprobs: [] }] };
    const tool_calls = [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }];
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_tokens_details: { cached_tokens: 1 } };
    const out = JSON.parse(openaiFormat.respondJson(chatCtx(), JSON.stringify({
      id: 'x', created: 1, model: 'Qwen', system_fingerprint: 'fp', service_tier: 'default', usage,
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls, refusal: null }, logprobs, finish_reason: 'tool_calls' }],
    }), 'vllm').body);
    expect(out).toEqual({
      id: 'x', object: 'chat.completion', created: 1, model: 'client-model', system_fingerprint: 'fp', service_tier: 'default', usage,
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls, refusal: null }, logprobs, finish_reason: 'tool_calls' }],
    });
  });

  it.each([
    ['not JSON', 'oops', chatCtx()],
    ['no choices', '{"id":"x"}', chatCtx()],
    ['images without a url or b64_json', '{"data":[{"revised_prompt":"x"}]}', imageCtx()],
    ['a body that is an array', '[]', chatCtx()],
  ])('refuses an answer with %s as upstream_error', (_what, text, ctx) => {
    expect(() => openaiFormat.respondJson(ctx, text, 'vllm')).toThrow(expect.objectContaining<Partial<GatewayError>>({ reason: 'upstream_error', status: 502 }));
  });
});

describe('openai format: stream', () => {
  it('relays tool-call deltas and logprobs in order, and keeps chunk-level fields to the last chunk', () => {
    const logprobs = { content: [{ token: 'x', logprob: -1, bytes: [120], top_logprobs: [] }] };
    const fp = { system_fingerprint: 'fp_1' };
    const { out } = run([
      chunk([{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }, finish_reason: null }], fp),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] }, finish_reason: null }], fp),
      chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish_reason: null }], fp),
      chunk([{ index: 0, delta: {}, logprobs, finish_reason: 'tool_calls' }], fp),
      chunk([], { ...fp, usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, completion_tokens_details: { reasoning_tokens: 0 } } }),
      '[DONE]',
    ]);
    expect(out.slice(0, 3).map((c) => c.choices[0].delta.tool_calls[0].function.arguments)).toEqual(['', '{"a"', ':1}']);
    expect(out[0].choices[0].delta).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_1' }] });
    expect(out[3].choices[0]).toEqual({ index: 0, delta: {}, logprobs, finish_reason: null });
    expect(out[4]).toMatchObject({ system_fingerprint: 'fp_1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { total_tokens: 3, completion_tokens_details: { reasoning_tokens: 0 } } });
    expect(out.every((c) => c === '[DONE]' || c.system_fingerprint === 'fp_1')).toBe(true);
    expect(out.at(-1)).toBe('[DONE]');
  });

  it('writes each chunk as JSON.stringify writes its object: the backend\'s own fields first, in their order, then the interface\'s', () => {
    // Keys that look like indexes, a key named __proto__, markup, escapes and nesting, each its own field.
    const raw = '{"id":"b-1","z_last":{"a":[1,"\\u2028",null]},"object":"x","2":"two","created":1700000000.9,"__proto__":{"p":1},"model":"Qwen","service_tier":"<b>\\"t\\"</b>","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}],"usage":null}';
    const t = openaiFormat.streamTransformer(chatCtx({}, true), 'vllm');
    const out: string[] = [];
    t.push(raw, (p) => out.push(p));
    t.push('[DONE]', (p) => out.push(p));
    const { id: _i, object: _o, created: _c, model: _m, choices: _ch, usage: _u, ...extras } = JSON.parse(raw);
    const expected = JSON.stringify({ ...extras, id: 'b-1', object: 'chat.completion.chunk', created: 1700000000, model: 'client-model', choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] });
    expect(out[0]).toBe(expected);
    expect(Object.keys(JSON.parse(out[0]))).toEqual(['2', 'z_last', '__proto__', 'service_tier', 'id', 'object', 'created', 'model', 'choices']);
    expect(JSON.parse(out[1])).toMatchObject({ service_tier: '<b>"t"</b>', usage: { total_tokens: expect.any(Number) } });
  });

  it.each(['null', '42', '"text"', 'nope', '{"half":'])('skips and counts an event that is not a JSON object (%s), and goes on', (data) => {
    const { out, ctx } = run([chunk([{ index: 0, delta: { content: 'a' } }]), data, chunk([{ index: 0, delta: { content: 'b' } }])]);
    expect(out.map((c) => c.choices[0].delta.content)).toEqual(['a', 'b']);
    expect(ctx.forwarding.skippedEvents).toBe(1);
  });

  it('finishes a stream the backend closed after its finish reason without [DONE], and not one cut before it', () => {
    const t = openaiFormat.streamTransformer(chatCtx({}, true), 'b');
    const out: string[] = [];
    t.push(JSON.stringify(chunk([{ index: 0, delta: { content: 'a' }, finish_reason: null }])), (p) => out.push(p));
    expect(t.finishIfComplete((p) => out.push(p))).toBe(false);
    t.push(JSON.stringify(chunk([{ index: 0, delta: {}, finish_reason: 'length' }])), (p) => out.push(p));
    expect(t.finishIfComplete((p) => out.push(p))).toBe(true);
    expect(out.at(-1)).toBe('[DONE]');
    expect(JSON.parse(out.at(-2)!)).toMatchObject({ choices: [{ index: 0, delta: {}, finish_reason: 'length' }], usage: expect.any(Object) });
  });

  it('folds a vLLM stream into the interface\'s chunks', () => {
    const { out, done, usage } = run([
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
    expect(usage).toMatchObject({ total_tokens: 5, estimated: false });
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

  it.each([['an event nested too deep', '['.repeat(100) + ']'.repeat(100)], ['an error event', { error: { message: 'overloaded' } }]])('fails on %s with upstream_error', (_what, event) => {
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
