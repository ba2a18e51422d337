import { CHARS_PER_TOKEN, estimateTokens, estimateUsage, promptChars, promptEstimate, publicUsage, readInputUsage, readUsage } from '../../../src/request/usage';
import type { Context } from '../../../src/pipeline/context';

// estimateUsage reads only the request part of a context.
const chatContext = (...contents: string[]) => ({ chat: { model: 'm', stream: false, model_params: {}, messages: contents.map((content) => ({ role: 'user', content })), texts: contents }, texts: contents }) as unknown as Context;
const imageContext = (prompt: string) => ({ image: { model: 'm', prompt, model_params: {}, texts: [prompt] }, texts: [prompt] }) as unknown as Context;

describe('estimateTokens', () => {
  it('counts about four characters a token, rounding up', () => {
    expect(CHARS_PER_TOKEN).toBe(4);
    expect(estimateTokens(0)).toBe(0);
    expect(estimateTokens(1)).toBe(1);
    expect(estimateTokens(4)).toBe(1);
    expect(estimateTokens(5)).toBe(2);
    expect(estimateTokens(400)).toBe(100);
  });
});

describe('estimateUsage', () => {
  it('estimates the prompt from every chat message and marks the result estimated', () => {
    const ctx = chatContext('abcd', 'abcdefgh', 'a');
    expect(promptChars(ctx)).toBe(13);
    expect(estimateUsage(ctx, 10)).toEqual({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7, estimated: true });
  });

  it('estimates an image prompt', () => {
    expect(estimateUsage(imageContext('x'.repeat(8)), 0)).toEqual({ prompt_tokens: 2, completion_tokens: 0, total_tokens: 2, estimated: true });
  });

  it('is zero for an empty request', () => {
    expect(estimateUsage({ texts: [] } as unknown as Context, 0)).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });
});

describe('readUsage', () => {
  it('reads the three integer fields as reported, not estimated', () => {
    expect(readUsage({ prompt_tokens: 11, completion_tokens: 5, total_tokens: 16, extra: 1 })).toEqual({ prompt_tokens: 11, completion_tokens: 5, total_tokens: 16, estimated: false });
  });

  it('reads the cached prompt tokens and the reasoning tokens, each within its total', () => {
    const raw = { prompt_tokens: 1200, completion_tokens: 345, prompt_tokens_details: { cached_tokens: 400 }, completion_tokens_details: { reasoning_tokens: 120 } };
    expect(readUsage(raw)).toEqual({ prompt_tokens: 1200, completion_tokens: 345, total_tokens: 1545, estimated: false, cached_tokens: 400, reasoning_tokens: 120 });
    const over = { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 99 }, completion_tokens_details: { reasoning_tokens: 9 } };
    expect(readUsage(over)).toMatchObject({ cached_tokens: 10, reasoning_tokens: 5 });
  });

  it.each([null, 'x', { cached_tokens: -1 }, { cached_tokens: 1.5 }, { cached_tokens: '4' }])('leaves out details that are not counts: %p', (details) => {
    const read = readUsage({ prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: details, completion_tokens_details: details });
    expect(read).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, estimated: false });
  });

  it('computes a missing total', () => {
    expect(readUsage({ prompt_tokens: 2, completion_tokens: 3 })?.total_tokens).toBe(5);
  });

  it.each([null, undefined, 'usage', 7, {}, { prompt_tokens: 1 }, { prompt_tokens: '1', completion_tokens: 2 }, { prompt_tokens: 1.5, completion_tokens: 2 }])('rejects %p', (raw) => {
    expect(readUsage(raw)).toBeUndefined();
  });
});

describe('publicUsage', () => {
  it('drops the estimated flag', () => {
    expect(publicUsage({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, estimated: true })).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });
});

describe('readInputUsage', () => {
  it('reads prompt_tokens, else total_tokens (vLLM\'s rerank), as input tokens only', () => {
    expect(readInputUsage({ prompt_tokens: 7, total_tokens: 7 })).toEqual({ prompt_tokens: 7, completion_tokens: 0, total_tokens: 7, estimated: false });
    expect(readInputUsage({ total_tokens: 9 })).toEqual({ prompt_tokens: 9, completion_tokens: 0, total_tokens: 9, estimated: false });
  });

  it('ignores what is not a count: the caller then estimates', () => {
    for (const raw of [undefined, null, 'x', {}, { prompt_tokens: -1 }, { prompt_tokens: 1.5 }, { total_tokens: '3' }]) expect(readInputUsage(raw)).toBeUndefined();
  });
});

describe('promptEstimate', () => {
  it('counts token ids one for one beside the texts\' characters', () => {
    const ctx = { texts: ['abcdefgh'], inputs: { tokenIds: 5 } } as unknown as Context;
    expect(promptEstimate(ctx)).toBe(7);
    expect(estimateUsage(ctx, 0)).toEqual({ prompt_tokens: 7, completion_tokens: 0, total_tokens: 7, estimated: true });
  });
});
