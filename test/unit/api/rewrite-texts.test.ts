// rewriteTexts: every text a request forwards goes through the function,
// names, ids, roles, types, URLs and encoded data do not; the request view
// (ctx.texts) is made again from the result; nothing shared is changed.
import { rewriteTexts } from '../../../src/api/rewrite-texts';
import { rewriteStrings } from '../../../src/request/rewrite-strings';
import { ResponsesExchange } from '../../../src/proxy/exchanges/responses';
import type { RequestContext } from '../../../src/contract/plugin';
import { chatContext, imageContext } from '../../plugins/helpers';

const upper = (t: string): string => t.toUpperCase();

describe('rewriteTexts', () => {
  it('rewrites a chat request\'s texts and leaves its names, ids and URLs', () => {
    const ctx = chatContext([
      'be kind',
      { role: 'user', name: 'ann', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://x.example/a.png' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'find', arguments: '{"q":"it"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'found' },
    ], { tools: [{ type: 'function', function: { name: 'find', description: 'finds', parameters: { type: 'object', properties: { q: { type: 'string', description: 'what' } } } } }], stop: ['end'] });
    expect(rewriteTexts(ctx, upper)).toBe(true);
    expect(ctx.chat!.messages).toEqual([
      { role: 'system', content: 'BE KIND' },
      { role: 'user', name: 'ann', content: [{ type: 'text', text: 'LOOK' }, { type: 'image_url', image_url: { url: 'https://x.example/a.png' } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'find', arguments: '{"Q":"IT"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'FOUND' },
    ]);
    expect(ctx.chat!.model_params).toEqual({ tools: [{ type: 'function', function: { name: 'find', description: 'FINDS', parameters: { type: 'object', properties: { q: { type: 'string', description: 'WHAT' } } } } }], stop: ['END'] });
    expect(ctx.texts).toEqual(expect.arrayContaining(['BE KIND', 'LOOK', '{"Q":"IT"}', 'FOUND', 'FINDS', 'WHAT', 'END']));
    expect(ctx.texts).not.toContain('be kind');
    expect(ctx.chat!.texts).toBe(ctx.texts);
  });

  it('rewrites an image prompt and its string parameters', () => {
    const ctx = imageContext('a red fox', { style: 'vivid' });
    rewriteTexts(ctx, upper);
    expect(ctx.image).toMatchObject({ prompt: 'A RED FOX', model_params: { style: 'VIVID' } });
    expect(ctx.texts).toEqual(['A RED FOX', 'VIVID']);
  });

  it('changes nothing and says so when the function changes nothing', () => {
    const ctx = chatContext(['same']);
    const before = ctx.chat;
    expect(rewriteTexts(ctx, (t) => t)).toBe(false);
    expect(ctx.chat).toBe(before);
  });

  it('rewrites a Responses request and the stored turns it continues without changing the stored items', () => {
    const stored = Object.freeze([Object.freeze({ type: 'message', role: 'user', content: 'earlier words' })]);
    const exchange = new ResponsesExchange({ request: { model: 'm', instructions: 'short', input: 'now' } as never, id: 'resp_1', createdAt: 1, history: stored as never });
    const ctx = { source: exchange, texts: [] } as unknown as RequestContext;
    expect(rewriteTexts(ctx, upper)).toBe(true);
    expect(exchange.turn.request).toMatchObject({ model: 'm', instructions: 'SHORT', input: 'NOW' });
    expect(exchange.turn.history).toEqual([{ type: 'message', role: 'user', content: 'EARLIER WORDS' }]);
    expect(stored[0].content).toBe('earlier words');
    expect(ctx.texts).toEqual(expect.arrayContaining(['SHORT', 'NOW', 'EARLIER WORDS']));
    expect(JSON.stringify(ctx.chat!.messages)).toContain('EARLIER WORDS');
  });

  it('treats every string of a tool call\'s input as data, names included', () => {
    const block = { type: 'tool_use', id: 'toolu_1', name: 'save', input: { name: 'ann', id: 'x1', nested: { type: 'note' } } };
    expect(rewriteStrings(block, upper)).toEqual({ type: 'tool_use', id: 'toolu_1', name: 'save', input: { name: 'ANN', id: 'X1', nested: { type: 'NOTE' } } });
  });

  it('rewrites the keys of the caller\'s data (metadata, a tool call\'s input) only when asked, and no other key', () => {
    const body = { metadata: { ann: 'a' }, messages: [{ role: 'user', content: 'hi', extra: { bob: 'b' } }, { type: 'tool_use', id: 't', name: 'n', input: { cat: { dog: 'd' } } }] };
    expect(rewriteStrings(body, upper)).toEqual({ metadata: { ann: 'A' }, messages: [{ role: 'user', content: 'HI', extra: { bob: 'B' } }, { type: 'tool_use', id: 't', name: 'n', input: { cat: { dog: 'D' } } }] });
    expect(rewriteStrings(body, upper, false, true)).toEqual({ metadata: { ANN: 'A' }, messages: [{ role: 'user', content: 'HI', extra: { bob: 'B' } }, { type: 'tool_use', id: 't', name: 'n', input: { CAT: { DOG: 'D' } } }] });
  });

  it('keeps the keys\' order, keeps "__proto__" a key, and calls the function once a key', () => {
    const seen: string[] = [];
    const once = (t: string): string => { seen.push(t); return t === 'b' ? 'B' : t; };
    const metadata = JSON.parse('{"a":"1","b":"2","__proto__":"3"}') as Record<string, string>;
    const out = rewriteStrings({ metadata }, once, false, true).metadata;
    expect(Object.keys(out)).toEqual(['a', 'B', '__proto__']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(seen.filter((t) => t === 'b')).toHaveLength(1);
    expect(metadata.b).toBe('2');
  });

  it('rewrites metadata keys through rewriteTexts, and the view reads the rewritten keys', () => {
    const ctx = chatContext(['hi'], { metadata: { secret: 'x' } });
    expect(rewriteTexts(ctx, (t) => t.replace('secret', 'gone'))).toBe(true);
    expect(ctx.chat!.model_params.metadata).toEqual({ gone: 'x' });
    expect(ctx.texts).toContain('gone');
    expect(ctx.texts).not.toContain('secret');
  });
});
