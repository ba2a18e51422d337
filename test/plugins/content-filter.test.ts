import { plugin, refusalMessage } from '../../plugins/content-filter';
import { chatContext, configProblems, hooksOf, imageContext, refusalOf } from './helpers';

const settings = { terms: ['forbidden phrase', 'bomb', 'c++', 'Café'], patterns: ['\\bcredit card number\\b', '\\d{4}-\\d{4}-\\d{4}-\\d{4}'], contact: 'policy@example.com' };

describe('content-filter plugin', () => {
  const blocked = async (text: string, s: Record<string, unknown> = settings) => (await refusalOf(await hooksOf(plugin, s), imageContext(text))) !== undefined;

  it('refuses with the interface\'s content_filter error, param prompt, status 400', async () => {
    const err = await refusalOf(await hooksOf(plugin, settings), imageContext('a forbidden phrase'));
    expect(err).toMatchObject({ reason: 'content_filter', status: 400, param: 'prompt' });
  });

  it('points to the content policy and the contact, without saying which rule matched', async () => {
    const err = (await refusalOf(await hooksOf(plugin, settings), imageContext('here is my credit card number')))!;
    expect(err.message).toMatch(/content policy/i);
    expect(err.message).toContain('policy@example.com');
    for (const rule of ['forbidden', 'credit', 'bomb', '\\d']) expect(err.message).not.toContain(rule);
    const other = (await refusalOf(await hooksOf(plugin, settings), imageContext('bomb')))!;
    expect(other.message).toBe(err.message);
  });

  it('names the policy URL when one is configured, and a generic contact otherwise', () => {
    expect(refusalMessage({ policyUrl: 'https://example.com/policy' })).toContain('https://example.com/policy');
    expect(refusalMessage({}).length).toBeGreaterThan(30);
  });

  it.each([
    'a forbidden phrase here',
    'A FORBIDDEN PHRASE',
    'Forbidden   Phrase',
    'forbidden\tphrase',
    'forbidden\nphrase',
    'forbidden phrase.',
    '"forbidden phrase"',
    'bomb',
    'a Bomb!',
    'I write c++ daily',
    'café au lait',
    'CAFÉ',
  ])('matches terms as whole words or phrases in any case: %p', async (text) => {
    expect(await blocked(text)).toBe(true);
  });

  it.each([
    'a forbiddenphrase',
    'unforbidden phrase',
    'forbidden phrases',
    'forbidden-phrase',
    'bombastic',
    'abomb',
    'bomb_shelter',
    'bomb2',
    'cafés',
    'an innocent prompt',
  ])('does not match a term inside a longer word: %p', async (text) => {
    expect(await blocked(text)).toBe(false);
  });

  it('matches patterns as regular expressions, in any case', async () => {
    expect(await blocked('my CREDIT CARD NUMBER is')).toBe(true);
    expect(await blocked('1234-5678-9012-3456')).toBe(true);
    expect(await blocked('credit card numbers')).toBe(false);
    expect(await blocked('1234-5678')).toBe(false);
  });

  it('keeps each pattern\'s own groups and backreferences', async () => {
    const s = { patterns: ['(a)\\1', '(b)\\1', '(?<w>zz)\\k<w>'] };
    expect(await blocked('xaax', s)).toBe(true);
    expect(await blocked('xbbx', s)).toBe(true);
    expect(await blocked('zzzz', s)).toBe(true);
    expect(await blocked('xbx', s)).toBe(false);
    expect(await blocked('zz', s)).toBe(false);
  });

  it('allows patterns that reuse a group name', async () => {
    const s = { patterns: ['(?<w>foo)', '(?<w>bar)'] };
    expect(configProblems(plugin, s)).toEqual([]);
    expect(await blocked('a bar', s)).toBe(true);
  });

  it('checks every chat message, whatever its role', async () => {
    const hooks = await hooksOf(plugin, settings);
    expect(await refusalOf(hooks, chatContext(['system ok', 'fine', 'still fine']))).toBeUndefined();
    expect(await refusalOf(hooks, chatContext(['a bomb', 'fine'])))
      .toMatchObject({ reason: 'content_filter', param: 'prompt' });
    expect(await refusalOf(hooks, chatContext(['fine', 'fine', 'the forbidden phrase'])))
      .toMatchObject({ reason: 'content_filter', param: 'prompt' });
  });

  it('reads every form of chat text: parts, developer and tool messages, tool-call arguments, tool definitions, stop strings', async () => {
    const hooks = await hooksOf(plugin, settings);
    const call = { id: 'c1', type: 'function' as const, function: { name: 'lookup', arguments: '{"q":"a bomb"}' } };
    const refused = [
      chatContext([{ role: 'user', content: [{ type: 'text', text: 'fine' }, { type: 'text', text: 'a bomb' }] }]),
      chatContext([{ role: 'developer', content: 'a bomb' }]),
      chatContext([{ role: 'tool', tool_call_id: 'c1', content: 'the forbidden phrase' }]),
      chatContext([{ role: 'assistant', content: null, tool_calls: [call] }]),
      chatContext(['fine'], { tools: [{ type: 'function', function: { name: 'f', description: 'makes a bomb' } }] }),
      chatContext(['fine'], { stop: ['x', 'bomb'] }),
      chatContext(['fine'], { guided_regex: 'forbidden phrase' }),
    ];
    for (const ctx of refused) expect(await refusalOf(hooks, ctx)).toMatchObject({ reason: 'content_filter', param: 'prompt' });
    expect(await refusalOf(hooks, chatContext([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/bomb.png' } }] }]))).toBeUndefined();
  });

  it.each([
    ['a zero-width space inside a word', 'bo\u200bmb'],
    ['a soft hyphen and a word joiner', 'forbid\u00ad\u2060den phrase'],
    ['full-width letters', '\uff42\uff4f\uff4d\uff42'],
    ['a non-breaking space and a tab run', 'forbidden\u00a0\t phrase'],
    ['a variation selector', 'bomb\ufe0f'],
  ])('sees through %s', async (_what, text) => {
    expect(await blocked(text)).toBe(true);
  });

  it('lets everything through when no rule is configured', async () => {
    expect(await blocked('forbidden phrase bomb', {})).toBe(false);
  });

  it('rejects an invalid regular expression at config time, with its path', () => {
    const problems = configProblems(plugin, { patterns: ['ok', '([a-z'] });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^plugins\[0\]\.patterns\[1\]: .*regular expression/);
  });

  it('rejects empty terms and unknown settings at config time, with their paths', () => {
    expect(configProblems(plugin, { terms: ['ok', '   '] })[0]).toMatch(/^plugins\[0\]\.terms\[1\]: /);
    expect(configProblems(plugin, { term: ['x'] })).toEqual(['plugins[0].term: unknown field']);
    expect(configProblems(plugin, { patterns: 'x' })[0]).toMatch(/^plugins\[0\]\.patterns: /);
  });
});
