import { ResponsesObserver, usageOfJson } from '../../../../src/protocols/responses/native';

const usage = { input_tokens: 120, input_tokens_details: { cached_tokens: 64 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 10 }, total_tokens: 150 };

describe('usageOfJson', () => {
  it.each([
    ['a full usage object', { object: 'response', usage }, { input_tokens: 120, output_tokens: 30, cached_input_tokens: 64, reasoning_tokens: 10 }],
    ['a usage object without details', { usage: { input_tokens: 5, output_tokens: 1, total_tokens: 6 } }, { input_tokens: 5, output_tokens: 1 }],
    ['usage null', { usage: null }, undefined],
    ['counts that are not counts', { usage: { input_tokens: -1, output_tokens: 2 } }, undefined],
    ['no object', 'text', undefined],
  ])('reads %s', (_what, body, expected) => {
    expect(usageOfJson(body)).toEqual(expected);
  });
});

describe('ResponsesObserver', () => {
  it.each(['response.completed', 'response.incomplete', 'response.failed'])('keeps the response and usage of %s, and is done', (type) => {
    const seen = new ResponsesObserver();
    const response = { id: 'resp_1', status: 'x', output: [], usage };
    for (const event of [
      { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', usage: null } },
      { type: 'response.output_text.delta', sequence_number: 1, delta: 'hi' },
    ]) seen.observe(event);
    expect(seen).toMatchObject({ done: false, usage: undefined, response: undefined, latest: { id: 'resp_1', usage: null } });
    seen.observe({ type, sequence_number: 2, response });
    expect(seen.latest).toBe(response);
    expect(seen).toMatchObject({ done: true, response, usage: { input_tokens: 120, output_tokens: 30, cached_input_tokens: 64, reasoning_tokens: 10 } });
  });

  it('is done after an error event, without a response', () => {
    const seen = new ResponsesObserver();
    seen.observe({ type: 'error', sequence_number: 3, code: 'server_error', message: 'x', param: null });
    expect(seen).toMatchObject({ done: true, response: undefined, usage: undefined });
  });

  it('ignores what is not an event', () => {
    const seen = new ResponsesObserver();
    for (const event of [{}, { type: 5 }, { type: 'response.completed', response: 'no' }]) seen.observe(event);
    expect(seen.response).toBeUndefined();
  });
});
