import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../../src/request/json-depth';

const nested = (depth: number, inner = '1') => '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('jsonDepthExceeds', () => {
  it('counts objects and arrays inside one another, exactly at the bound', () => {
    expect(jsonDepthExceeds('1', 0)).toBe(false);
    expect(jsonDepthExceeds('{}', 0)).toBe(true);
    expect(jsonDepthExceeds('{}', 1)).toBe(false);
    expect(jsonDepthExceeds('{"a":[]}', 1)).toBe(true);
    expect(jsonDepthExceeds('{"a":[]}', 2)).toBe(false);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonDepthExceeds(arrays(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonDepthExceeds(arrays(MAX_JSON_DEPTH + 1))).toBe(true);
  });

  it('counts depth, not the number of brackets: siblings do not add up', () => {
    const wide = `[${Array.from({ length: 10_000 }, () => '{"a":[1,{"b":2}]}').join(',')}]`;
    expect(jsonDepthExceeds(wide, 4)).toBe(false);
    expect(jsonDepthExceeds(wide, 3)).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes and backslashes included', () => {
    expect(jsonDepthExceeds(JSON.stringify({ a: '[[[[[[{{{{{' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ a: 'say \\"[[[[\\" and \\\\', b: '"{{{{"' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ 'k[[[': { '"]]]': 1 } }), 2)).toBe(false);
    // A string ending in an escaped backslash ends there: the brackets after it count.
    expect(jsonDepthExceeds('{"a":"x\\\\","b":[[]]}', 2)).toBe(true);
    expect(jsonDepthExceeds('{"a":"x\\",[[[","b":1}', 1)).toBe(false); // an escaped quote does not end it
  });

  it('finds 100,000 levels at once, whatever the nesting is made of', () => {
    expect(jsonDepthExceeds(arrays(100_000))).toBe(true);
    expect(jsonDepthExceeds(nested(100_000))).toBe(true);
    expect(jsonDepthExceeds(`{"model":"m","messages":${arrays(100_000)}}`)).toBe(true);
  });

  it('leaves malformed text to the parser', () => {
    expect(jsonDepthExceeds('')).toBe(false);
    expect(jsonDepthExceeds('{"a":"unterminated [[[[')).toBe(false);
    expect(jsonDepthExceeds(']]]]')).toBe(false);
    expect(jsonDepthExceeds('{'.repeat(MAX_JSON_DEPTH + 1))).toBe(true);
  });
});
