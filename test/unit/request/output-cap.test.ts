import { outputCapOf, unifyOutputCaps, withOutputCap } from '../../../src/request/output-cap';
import { PER_REQUEST_TOKENS, PER_TEXT_TOKENS, promptTokenBound } from '../../../src/request/token-bound';
import { parseChatRequest } from '../../../src/api/chat-request';
import { parseResponsesRequest } from '../../../src/protocols/responses/request';
import { parseMessagesRequest } from '../../../src/protocols/messages/request';
import { toChat } from '../../../src/protocols/responses/to-chat';
import { GatewayError } from '../../../src/contract/errors';

const messages = [{ role: 'user', content: 'hi' }];
const refusal = (fn: () => unknown): GatewayError => {
  try { fn(); } catch (e) { return e as GatewayError; }
  throw new Error('not refused');
};

describe('output caps: one cap wins', () => {
  it('the cap is the smallest cap field given; null and absent are none', () => {
    expect(outputCapOf({})).toBeUndefined();
    expect(outputCapOf({ max_tokens: null })).toBeUndefined();
    expect(outputCapOf({ max_tokens: 100000, max_completion_tokens: 1 })).toBe(1);
    expect(outputCapOf({ max_tokens: 1, max_completion_tokens: 100000 })).toBe(1);
    expect(outputCapOf({ max_output_tokens: 7, max_tokens: 9 })).toBe(7);
    expect(outputCapOf({ max_tokens: 0 })).toBe(0);
  });

  it('writes the cap into every cap field present, and the primary one; the same object when nothing changes', () => {
    const same = { max_tokens: 5 };
    expect(withOutputCap(same, 5)).toBe(same);
    expect(withOutputCap({ max_tokens: 9, max_completion_tokens: 7, temperature: 1 }, 3)).toEqual({ max_tokens: 3, max_completion_tokens: 3, temperature: 1 });
    expect(withOutputCap({ temperature: 1 }, 3, 'max_tokens')).toEqual({ temperature: 1, max_tokens: 3 });
    expect(withOutputCap({ max_tokens: null }, 3)).toEqual({ max_tokens: null });
    expect(unifyOutputCaps({ max_tokens: 100000, max_completion_tokens: 1 })).toEqual({ max_tokens: 1, max_completion_tokens: 1 });
  });

  it('a chat request: a string, negative or fractional cap is a 400 naming the field; conflicting caps become one', () => {
    for (const [body, param] of [
      [{ max_completion_tokens: '100000' }, 'max_completion_tokens'],
      [{ max_tokens: -1 }, 'max_tokens'],
      [{ max_tokens: 1.5 }, 'max_tokens'],
      [{ model_params: { max_output_tokens: '5' } }, 'model_params.max_output_tokens'],
    ] as const) {
      expect(refusal(() => parseChatRequest({ model: 'm', messages, ...body }))).toMatchObject({ status: 400, reason: 'invalid_request', param });
    }
    expect(refusal(() => parseChatRequest({ model: 'm', messages, max_output_tokens: '9' }, 'openai'))).toMatchObject({ param: 'max_output_tokens' });
    expect(refusal(() => parseChatRequest({ model: 'm', messages, max_completion_tokens: '1' })).message).toMatch(/max_completion_tokens must be a number, got a string/);
    expect(parseChatRequest({ model: 'm', messages, max_completion_tokens: 1, max_tokens: 100000 }).model_params).toEqual({ max_tokens: 1, max_completion_tokens: 1 });
    expect(parseChatRequest({ model: 'm', messages, max_output_tokens: 4, max_tokens: 100 }, 'openai').model_params).toEqual({ max_tokens: 4, max_output_tokens: 4 });
    // A cap named only where no chat server reads it is written into max_tokens; max_completion_tokens alone gets no max_tokens beside it.
    expect(parseChatRequest({ model: 'm', messages, model_params: { max_output_tokens: 4 } }).model_params).toEqual({ max_tokens: 4, max_output_tokens: 4 });
    expect(parseChatRequest({ model: 'm', messages, max_completion_tokens: 4 }).model_params).toEqual({ max_completion_tokens: 4 });
  });

  it('a Responses request: the extra cap fields are checked, the smallest wins, and the chat translation carries it alone', () => {
    expect(refusal(() => parseResponsesRequest({ model: 'm', input: 'hi', max_completion_tokens: '100000' }))).toMatchObject({ status: 400, param: 'max_completion_tokens' });
    const req = parseResponsesRequest({ model: 'm', input: 'hi', max_output_tokens: 100, max_completion_tokens: 7, max_tokens: 50 });
    expect(req).toMatchObject({ max_output_tokens: 7, max_completion_tokens: 7, max_tokens: 7 });
    expect(parseResponsesRequest({ model: 'm', input: 'hi', max_tokens: 50 })).toMatchObject({ max_output_tokens: 50, max_tokens: 50 });
    const { params } = toChat(req);
    expect(params.max_tokens).toBe(7);
    expect(params.max_completion_tokens).toBeUndefined();
  });

  it('a Messages request: the extra cap fields are checked, and max_tokens is the smallest', () => {
    expect(refusal(() => parseMessagesRequest({ model: 'm', messages, max_tokens: 100, max_output_tokens: '7' }))).toMatchObject({ status: 400, param: 'max_output_tokens' });
    expect(parseMessagesRequest({ model: 'm', messages, max_tokens: 100, max_completion_tokens: 7 })).toMatchObject({ max_tokens: 7, max_completion_tokens: 7 });
  });
});

describe('promptTokenBound', () => {
  it('is the UTF-8 bytes of every text, a template allowance a text, and one a request', () => {
    expect(promptTokenBound({ texts: [] })).toBe(PER_REQUEST_TOKENS);
    expect(promptTokenBound({ texts: ['abcd'] })).toBe(PER_REQUEST_TOKENS + 4 + PER_TEXT_TOKENS);
    // Three bytes a CJK character, four an emoji (two UTF-16 units).
    expect(promptTokenBound({ texts: ['漢字', '😀'] })).toBe(PER_REQUEST_TOKENS + 6 + 4 + 2 * PER_TEXT_TOKENS);
  });

  it('is never below a character count, the most tokens a text of single-character tokens has', () => {
    const cjk = '中'.repeat(4000);
    expect(promptTokenBound({ texts: [cjk] })).toBeGreaterThanOrEqual(4000);
  });

  it('counts token ids (embeddings\' token arrays) one for one: a tokenizer reads each as the token it is', () => {
    expect(promptTokenBound({ texts: ['ab'], inputs: { tokenIds: 100 } })).toBe(PER_REQUEST_TOKENS + 100 + 2 + PER_TEXT_TOKENS);
  });
});
