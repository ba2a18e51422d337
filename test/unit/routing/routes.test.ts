import { compileGlob, compileGlobList, isGlob } from '../../../src/auth/glob';
import { compileRoutes } from '../../../src/routing/routes';
import type { RouteConfig } from '../../../src/config/schema';

const route = (r: Partial<RouteConfig> & { model: string; upstream: string }): RouteConfig =>
  ({ endpoints: ['chat', 'images'], versions: ['v1', 'v2'], ...r });

describe('globs', () => {
  it('tells globs from exact ids', () => {
    expect(isGlob('chat-*')).toBe(true);
    expect(isGlob('gpt-4?')).toBe(true);
    expect(isGlob('Qwen/Qwen2.5-7B')).toBe(false);
  });

  it('matches * as any run of characters and ? as one, over the whole id', () => {
    const m = compileGlob('chat-*');
    expect(m('chat-')).toBe(true);
    expect(m('chat-large/v2')).toBe(true);
    expect(m('xchat-large')).toBe(false);
    expect(m('chat')).toBe(false);
    const q = compileGlob('gpt-4?');
    expect(q('gpt-4o')).toBe(true);
    expect(q('gpt-4')).toBe(false);
    expect(q('gpt-4oo')).toBe(false);
    expect(compileGlob('*')('anything at all')).toBe(true);
  });

  it('treats regex characters in a pattern literally', () => {
    expect(compileGlob('qwen2.5-*')('qwen2x5-7b')).toBe(false);
    expect(compileGlob('qwen2.5-*')('qwen2.5-7b')).toBe(true);
    expect(compileGlob('a+(b)')('a+(b)')).toBe(true);
    expect(compileGlob('a+(b)*')('aa(b)')).toBe(false);
  });

  it('is case-sensitive, like model ids', () => {
    expect(compileGlob('Chat-*')('chat-x')).toBe(false);
  });

  it('a list matches when any glob does; no list means no restriction', () => {
    const list = compileGlobList(['chat-*', 'img-1']);
    expect(list('chat-a')).toBe(true);
    expect(list('img-1')).toBe(true);
    expect(list('img-2')).toBe(false);
    expect(compileGlobList(undefined)('x')).toBe(true);
    expect(compileGlobList([])('x')).toBe(false);
  });
});

describe('compileRoutes', () => {
  const table = compileRoutes([
    route({ model: 'chat-special', upstream: 'special', upstreamModel: 'Special-7B' }),
    route({ model: 'chat-*', upstream: 'vllm', endpoints: ['chat'], advertise: ['chat-small', 'chat-large'] }),
    route({ model: 'chat-*', upstream: 'fallback' }),
    route({ model: 'img-?', upstream: 'images', endpoints: ['images'], versions: ['v2'] }),
    route({ model: 'img-1', upstream: 'images-v1', endpoints: ['images'], versions: ['v1'] }),
  ]);

  it('takes the first matching route', () => {
    expect(table.resolve('chat-special', 'chat', 'v1')).toMatchObject({ index: 0, upstream: 'special', upstreamModel: 'Special-7B' });
    expect(table.resolve('chat-other', 'chat', 'v1')).toMatchObject({ index: 1, upstream: 'vllm', upstreamModel: undefined });
  });

  it('skips routes whose endpoints exclude the request\'s endpoint', () => {
    expect(table.resolve('chat-other', 'images', 'v1')).toMatchObject({ index: 2, upstream: 'fallback' });
  });

  it('skips routes whose versions exclude the request\'s version', () => {
    expect(table.resolve('img-1', 'images', 'v2')).toMatchObject({ upstream: 'images' });
    expect(table.resolve('img-1', 'images', 'v1')).toMatchObject({ upstream: 'images-v1' });
    expect(table.resolve('img-2', 'images', 'v1')).toBeUndefined();
  });

  it('finds no route for an unknown model or a wrong endpoint', () => {
    expect(table.resolve('llama', 'chat', 'v1')).toBeUndefined();
    expect(table.resolve('img-1', 'chat', 'v1')).toBeUndefined();
  });

  it('answers the same on repeated lookups', () => {
    for (let i = 0; i < 3; i++) expect(table.resolve('chat-x', 'chat', 'v2')?.upstream).toBe('vllm');
    for (let i = 0; i < 3; i++) expect(table.resolve('nope', 'chat', 'v2')).toBeUndefined();
  });

  it('lists exact ids and advertised ids, never globs, with the endpoints each serves on that version', () => {
    expect(table.listed('v1')).toEqual([
      { id: 'chat-special', endpoints: ['chat', 'images'] },
      { id: 'chat-small', endpoints: ['chat', 'images'] },
      { id: 'chat-large', endpoints: ['chat', 'images'] },
      { id: 'img-1', endpoints: ['images'] },
    ]);
    expect(table.listed('v2').map((m) => m.id)).toEqual(['chat-special', 'chat-small', 'chat-large', 'img-1']);
  });

  it('leaves an id out of the listing of a version no route serves it on', () => {
    const t = compileRoutes([route({ model: 'm-1', upstream: 'a', versions: ['v2'] })]);
    expect(t.listed('v1')).toEqual([]);
    expect(t.listed('v2')).toEqual([{ id: 'm-1', endpoints: ['chat', 'images'] }]);
  });

  it('reports advertised ids that are globs or that the route does not match, with their paths', () => {
    const problems: string[] = [];
    compileRoutes([
      route({ model: 'a', upstream: 'u' }),
      route({ model: 'chat-*', upstream: 'u', advertise: ['chat-ok', 'chat-*', 'other'] }),
    ], problems);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^routes\[1\]\.advertise\[1\]: /);
    expect(problems[1]).toMatch(/^routes\[1\]\.advertise\[2\]: /);
  });
});

describe('input endpoints on routes', () => {
  it('lists them only where a route names them, after chat and images', () => {
    const table = compileRoutes([route({ model: 'emb', upstream: 'v', endpoints: ['score', 'embeddings'] }), route({ model: 'chat', upstream: 'v' })]);
    expect(table.listed('v1')).toEqual([{ id: 'emb', endpoints: ['embeddings', 'score'] }, { id: 'chat', endpoints: ['chat', 'images'] }]);
    expect(table.resolve('chat', 'embeddings', 'v1')).toBeUndefined();
  });

  it('refuses them on an upstream that does not speak OpenAI\'s format, naming the route', () => {
    const problems: string[] = [];
    compileRoutes([
      route({ model: 'a', upstream: 'native', endpoints: ['chat', 'embeddings', 'rerank'] }),
      route({ model: 'b', upstream: 'vllm', endpoints: ['moderations'] }),
      route({ model: 'c', upstream: 'demo', endpoints: ['chat'] }),
      route({ model: 'd', upstream: 'native', endpoints: ['transcriptions', 'speech'] }),
      route({ model: 'e', upstream: 'vllm', endpoints: ['translations'] }),
    ], problems, { native: { format: 'native' }, vllm: { format: 'openai' }, demo: { format: 'demo' } });
    expect(problems).toEqual([
      'routes[0].endpoints: embeddings, rerank need an upstream of format openai; "native" is native',
      'routes[3].endpoints: transcriptions, speech need an upstream of format openai; "native" is native',
    ]);
  });

  it('lists audio endpoints after the input endpoints', () => {
    const table = compileRoutes([route({ model: 'w', upstream: 'v', endpoints: ['speech', 'transcriptions', 'embeddings'] })]);
    expect(table.listed('v1')).toEqual([{ id: 'w', endpoints: ['embeddings', 'transcriptions', 'speech'] }]);
    expect(table.resolve('w', 'translations', 'v1')).toBeUndefined();
    expect(table.resolve('w', 'transcriptions', 'v2')).toBeDefined();
  });
});
