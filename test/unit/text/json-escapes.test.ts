// decodeJsonEscapes: a JSON string's escapes read as the characters they
// stand for, each mapped back to the whole escape it came from.
import { decodeJsonEscapes } from '../../../src/text/json-escapes';
import { sourceOf } from '../../../src/text/fold-map';

describe('decodeJsonEscapes', () => {
  it.each([
    ['no escape', 'project bluebird', 'project bluebird'],
    ['\\u letter', 'project \\u0062luebird', 'project bluebird'],
    ['\\u upper-case hex', '\\u0042LUE', 'BLUE'],
    ['\\u at', 'bob\\u0040example.com', 'bob@example.com'],
    ['surrogate pair', 'a\\ud83d\\ude00b', 'a\u{1f600}b'],
    ['lone surrogate', 'a\\ud83db', 'a\ud83db'],
    ['simple escapes', '\\"q\\" \\\\ \\/ \\b\\f\\n\\r\\t', '"q" \\ / \b\f\n\r\t'],
    ['escaped backslash before u', '\\\\u0062', '\\u0062'],
    ['not an escape', 'C:\\data\\x', 'C:\\data\\x'],
    ['short \\u', '\\u12 and \\u', '\\u12 and \\u'],
    ['trailing backslash', 'end\\', 'end\\'],
    ['JSON arguments', '{"m":"bob\\u0040example.com","k\\u0065y":1}', '{"m":"bob@example.com","key":1}'],
  ])('%s', (_name, text, decoded) => {
    expect(decodeJsonEscapes(text).text).toBe(decoded);
  });

  it('gives the text itself, unmapped, when nothing is decoded', () => {
    expect(decodeJsonEscapes('plain')).toEqual({ text: 'plain' });
    expect(decodeJsonEscapes('C:\\data')).toEqual({ text: 'C:\\data' });
  });

  it('maps each decoded character to the whole escape it came from', () => {
    const text = '{"m":"bob\\u0040ex.com\\n"}';
    const reading = decodeJsonEscapes(text);
    const at = reading.text.indexOf('bob@ex.com');
    const [start, end] = sourceOf(reading, at, at + 'bob@ex.com'.length);
    expect(text.slice(start, end)).toBe('bob\\u0040ex.com');
    const nl = reading.text.indexOf('\n');
    expect(text.slice(...sourceOf(reading, nl, nl + 1))).toBe('\\n');
    const pair = decodeJsonEscapes('x\\ud83d\\ude00');
    expect(sourceOf(pair, 1, 3)).toEqual([1, 13]);
  });
});
