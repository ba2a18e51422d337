import { inputsView, rewriteInputs } from '../../../src/request/inputs';
import { GatewayError } from '../../../src/contract/errors';

const LIMITS = { maxInputs: 3, maxChars: 20 };

/** The error a call throws (its reason and param), or undefined when it throws none. */
function refusal(fn: () => unknown): { reason: string; param: string | null | undefined } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { reason: err.reason, param: err.param };
  }
}

describe('inputsView', () => {
  it('makes each input, query and document a text of its own; token ids are counted, not texts', () => {
    expect(inputsView('m', { model: 'm', input: ['a', 'bc'] }, ['input'], ['input'], LIMITS)).toMatchObject({ texts: ['a', 'bc'], tokenIds: 0, fields: ['input'] });
    expect(inputsView('m', { model: 'm', query: 'q', documents: ['d', { text: 'e' }] }, ['query', 'documents'], ['documents'], LIMITS)).toMatchObject({ texts: ['q', 'd', 'e'], tokenIds: 0 });
    expect(inputsView('m', { model: 'm', input: [[1, 2], [3]] }, ['input'], ['input'], LIMITS)).toMatchObject({ texts: [], tokenIds: 3 });
  });

  it('counts a token array as one input, and a list of them as its length', () => {
    const many = Array.from({ length: 10 }, (_, i) => i);
    expect(refusal(() => inputsView('m', { input: many }, ['input'], ['input'], LIMITS))).toBeUndefined();
    expect(refusal(() => inputsView('m', { input: [[1], [2], [3], [4]] }, ['input'], ['input'], LIMITS))).toEqual({ reason: 'invalid_request', param: 'input' });
  });

  it('refuses more items than maxInputs, naming the list', () => {
    expect(refusal(() => inputsView('m', { input: ['a', 'b', 'c'] }, ['input'], ['input'], LIMITS))).toBeUndefined();
    expect(refusal(() => inputsView('m', { input: ['a', 'b', 'c', 'd'] }, ['input'], ['input'], LIMITS))).toEqual({ reason: 'invalid_request', param: 'input' });
    // The query is not a list: only the documents count.
    expect(refusal(() => inputsView('m', { query: 'q', documents: ['a', 'b', 'c', 'd'] }, ['query', 'documents'], ['documents'], LIMITS))).toEqual({ reason: 'invalid_request', param: 'documents' });
    expect(refusal(() => inputsView('m', { text_1: 'q', text_2: ['a', 'b', 'c', 'd'] }, ['text_1', 'text_2'], ['text_1', 'text_2'], LIMITS))).toEqual({ reason: 'invalid_request', param: 'text_2' });
  });

  it('refuses more characters than maxChars across the fields, naming the field that went over', () => {
    expect(refusal(() => inputsView('m', { input: ['x'.repeat(10), 'y'.repeat(10)] }, ['input'], ['input'], LIMITS))).toBeUndefined();
    expect(refusal(() => inputsView('m', { input: ['x'.repeat(10), 'y'.repeat(11)] }, ['input'], ['input'], LIMITS))).toEqual({ reason: 'invalid_request', param: 'input' });
    expect(refusal(() => inputsView('m', { query: 'x'.repeat(15), documents: ['y'.repeat(6)] }, ['query', 'documents'], ['documents'], LIMITS))).toEqual({ reason: 'invalid_request', param: 'documents' });
    expect(refusal(() => inputsView('m', { input: [Array(21).fill(0)] }, ['input'], ['input'], LIMITS))).toEqual({ reason: 'invalid_request', param: 'input' });
  });
});

describe('rewriteInputs', () => {
  const view = inputsView('m', { model: 'm', query: 'mail bob', documents: ['bob', { text: 'not him' }], top_n: 2 }, ['query', 'documents'], ['documents'], { maxInputs: 10, maxChars: 100 });

  it('rewrites every text of the text fields, documents\' text included, and makes the view again', () => {
    const out = rewriteInputs(view, (t) => t.replace(/bob/g, '[NAME]'))!;
    expect(out.body).toEqual({ model: 'm', query: 'mail [NAME]', documents: ['[NAME]', { text: 'not him' }], top_n: 2 });
    expect(out.texts).toEqual(['mail [NAME]', '[NAME]', 'not him']);
  });

  it('returns undefined when nothing changed, leaving the body as it was', () => {
    expect(rewriteInputs(view, (t) => t)).toBeUndefined();
    expect(view.body.query).toBe('mail bob');
  });
});
