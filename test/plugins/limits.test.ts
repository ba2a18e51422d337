import { plugin, SPEC_N_MAX, SPEC_N_MIN, SPEC_PROMPT_MAX_CHARS } from '../../plugins/limits';
import { chatContext, configProblems, hooksOf, imageContext, refusalOf } from './helpers';

describe('limits plugin', () => {
  it('holds the interface\'s limits by default: prompt at most 1000 characters, n from 1 to 10', async () => {
    expect([SPEC_PROMPT_MAX_CHARS, SPEC_N_MIN, SPEC_N_MAX]).toEqual([1000, 1, 10]);
    const hooks = await hooksOf(plugin);
    expect(await refusalOf(hooks, imageContext('x'.repeat(1000)))).toBeUndefined();
    expect(await refusalOf(hooks, imageContext('x'.repeat(1001)))).toMatchObject({ reason: 'invalid_request', status: 400, param: 'prompt' });
  });

  it('counts characters, not UTF-16 units: 1000 emoji fit, 1001 do not', async () => {
    const hooks = await hooksOf(plugin);
    expect(await refusalOf(hooks, imageContext('🦊'.repeat(1000)))).toBeUndefined();
    const err = await refusalOf(hooks, imageContext('🦊'.repeat(1001)));
    expect(err).toMatchObject({ reason: 'invalid_request', param: 'prompt' });
    expect(err!.message).toContain('1001');
  });

  it.each([1, 5, 10, null, undefined])('lets image n = %p through', async (n) => {
    expect(await refusalOf(await hooksOf(plugin), imageContext('p', { n }))).toBeUndefined();
  });

  it.each([0, -1, 11, 100, 2.5, Number.NaN])('refuses image n = %p on model_params.n', async (n) => {
    const err = await refusalOf(await hooksOf(plugin), imageContext('p', { n }));
    expect(err).toMatchObject({ reason: 'invalid_request', status: 400, param: 'model_params.n' });
    expect(err!.message).toMatch(/1.*10/);
  });

  it('applies the n range to chat too', async () => {
    const hooks = await hooksOf(plugin);
    expect(await refusalOf(hooks, chatContext(['hi'], { n: 10 }))).toBeUndefined();
    expect(await refusalOf(hooks, chatContext(['hi'], { n: 11 }))).toMatchObject({ reason: 'invalid_request', param: 'model_params.n' });
    expect(await refusalOf(hooks, chatContext(['hi'], { n: 0 }))).toMatchObject({ reason: 'invalid_request', param: 'model_params.n' });
  });

  it('does not limit the length of chat messages by default', async () => {
    expect(await refusalOf(await hooksOf(plugin), chatContext(['x'.repeat(50_000)]))).toBeUndefined();
  });

  it('lets an operator tighten the limits', async () => {
    const hooks = await hooksOf(plugin, { promptMaxChars: 20, nMin: 2, nMax: 4, messagesMax: 2, messageCharsMax: 10 });
    expect(await refusalOf(hooks, imageContext('x'.repeat(20), { n: 4 }))).toBeUndefined();
    expect(await refusalOf(hooks, imageContext('x'.repeat(21)))).toMatchObject({ param: 'prompt' });
    expect(await refusalOf(hooks, imageContext('p', { n: 5 }))).toMatchObject({ param: 'model_params.n' });
    expect(await refusalOf(hooks, imageContext('p', { n: 1 }))).toMatchObject({ param: 'model_params.n' });
    expect(await refusalOf(hooks, chatContext(['12345', '12345']))).toBeUndefined();
    expect(await refusalOf(hooks, chatContext(['a', 'b', 'c']))).toMatchObject({ reason: 'invalid_request', param: 'messages' });
    expect(await refusalOf(hooks, chatContext(['12345', '123456']))).toMatchObject({ reason: 'invalid_request', param: 'messages' });
  });

  it('refuses a config that loosens the limits past the interface, with the path', () => {
    expect(configProblems(plugin, { promptMaxChars: 1001 })).toEqual([expect.stringMatching(/^plugins\[0\]\.promptMaxChars: /)]);
    expect(configProblems(plugin, { nMax: 11 })).toEqual([expect.stringMatching(/^plugins\[0\]\.nMax: /)]);
    expect(configProblems(plugin, { nMin: 0 })).toEqual([expect.stringMatching(/^plugins\[0\]\.nMin: /)]);
  });

  it('refuses an inconsistent or malformed config, with the path', () => {
    expect(configProblems(plugin, { nMin: 5, nMax: 3 })).toEqual([expect.stringMatching(/^plugins\[0\]\.nMin: /)]);
    expect(configProblems(plugin, { promptMaxChars: 'lots' })).toEqual([expect.stringMatching(/^plugins\[0\]\.promptMaxChars: /)]);
    expect(configProblems(plugin, { promptMaxChars: 10.5 })).toEqual([expect.stringMatching(/^plugins\[0\]\.promptMaxChars: /)]);
    expect(configProblems(plugin, { maxPrompt: 10 })).toEqual(['plugins[0].maxPrompt: unknown field']);
  });

  it('accepts the issue\'s example entry', () => {
    expect(configProblems(plugin, { promptMaxChars: 1000, nMin: 1, nMax: 10 })).toEqual([]);
  });
});
