import { parseImageRequest } from '../../../src/api/image-request';
import { rejection } from '../../support/rejection';

const valid = { model: 'img-a', prompt: 'a lighthouse at dusk' };
const paramOf = (body: unknown) => rejection(parseImageRequest, body).param;

describe('parseImageRequest', () => {
  it('accepts the minimal body', () => {
    expect(parseImageRequest(valid)).toEqual({ model: 'img-a', prompt: 'a lighthouse at dusk', model_params: {}, texts: ['a lighthouse at dusk'] });
  });

  it('requires model and prompt as non-empty strings', () => {
    expect(paramOf({ prompt: 'x' })).toBe('model');
    expect(paramOf({ ...valid, model: '' })).toBe('model');
    expect(paramOf({ model: 'm' })).toBe('prompt');
    expect(paramOf({ ...valid, prompt: 42 })).toBe('prompt');
    expect(paramOf({ ...valid, prompt: '' })).toBe('prompt');
    expect(paramOf({ ...valid, prompt: null })).toBe('prompt');
  });

  it('takes model_params.n as a number or null', () => {
    expect(parseImageRequest({ ...valid, model_params: { n: 3 } }).model_params).toEqual({ n: 3 });
    expect(parseImageRequest({ ...valid, model_params: { n: null } }).model_params).toEqual({ n: null });
    expect(paramOf({ ...valid, model_params: { n: '3' } })).toBe('model_params.n');
    expect(paramOf({ ...valid, model_params: { n: [1] } })).toBe('model_params.n');
  });

  it('takes model_params.size as <width>x<height>', () => {
    for (const size of ['1024x1024', '512x768', '1x1']) expect(parseImageRequest({ ...valid, model_params: { size } }).model_params.size).toBe(size);
    for (const size of ['1024', '1024*1024', 'x512', '0x512', '512x', 'large', ' 512x512', '512X512']) {
      expect(paramOf({ ...valid, model_params: { size } })).toBe('model_params.size');
    }
    expect(paramOf({ ...valid, model_params: { size: 512 } })).toBe('model_params.size');
  });

  it('takes model_params as an object or null and passes other keys through', () => {
    expect(parseImageRequest({ ...valid, model_params: null }).model_params).toEqual({});
    expect(parseImageRequest({ ...valid, model_params: { guidance: 7.5, negative_prompt: 'fog' } }).model_params).toEqual({ guidance: 7.5, negative_prompt: 'fog' });
    expect(paramOf({ ...valid, model_params: 'x' })).toBe('model_params');
  });

  it('accepts url and b64_json as response_format', () => {
    expect(parseImageRequest({ ...valid, response_format: 'url' }).model_params).toEqual({ response_format: 'url' });
    expect(parseImageRequest({ ...valid, response_format: 'b64_json' }).model_params).toEqual({ response_format: 'b64_json' });
    expect(paramOf({ ...valid, response_format: 'png' })).toBe('response_format');
    expect(paramOf({ ...valid, model_params: { response_format: 'svg' } })).toBe('model_params.response_format');
  });

  it('folds the OpenAI top-level names into model_params', () => {
    const top = { n: 2, size: '256x256', response_format: 'url', quality: 'hd', style: 'vivid', user: 'u' };
    expect(parseImageRequest({ ...valid, ...top }).model_params).toEqual(top);
  });

  it('rejects the same key in both places with different values, naming it', () => {
    expect(paramOf({ ...valid, n: 2, model_params: { n: 3 } })).toBe('n');
    expect(parseImageRequest({ ...valid, n: 2, model_params: { n: 2 } }).model_params).toEqual({ n: 2 });
  });

  it('applies a route\'s field rules', () => {
    const rules = { refuse: ['style'], drop: ['quality'] };
    expect(rejection((b: unknown) => parseImageRequest(b, rules), { model: 'm', prompt: 'p', style: 'vivid' }).param).toBe('style');
    expect(parseImageRequest({ model: 'm', prompt: 'p', quality: 'hd', n: 1 }, rules).model_params).toEqual({ n: 1 });
  });

  it('rejects an unknown top-level field, naming it', () => {
    expect(paramOf({ ...valid, negative_prompt: 'x' })).toBe('negative_prompt');
    expect(paramOf({ ...valid, messages: [] })).toBe('messages');
  });

  it('refuses a number too large for a double in model_params, naming it', () => {
    const huge = JSON.parse('1e400') as number;
    expect(rejection(parseImageRequest, { model: 'm', prompt: 'p', model_params: { seed: huge } })).toMatchObject({ param: 'model_params.seed', message: expect.stringContaining('too large to represent') });
    expect(rejection(parseImageRequest, { model: 'm', prompt: 'p', n: huge }).param).toBe('n');
  });
});
