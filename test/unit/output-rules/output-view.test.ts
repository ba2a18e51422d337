// What the output rules read of an answer's text: JSON escapes decoded
// however the deltas split them, long runs of filler read short, and each
// character's place in the text as written kept for masks.
import { FILLER_RUN, TextView } from '../../../src/output-rules/view';

/** The text read from `pieces` appended in turn, ended; and where each read character began. */
function read(pieces: string[]): { text: string; starts: number[] } {
  const v = new TextView();
  let at = 0;
  for (const p of pieces) { v.append(p, at); at += p.length; }
  v.finish(at);
  return { text: v.text, starts: Array.from({ length: v.text.length }, (_, i) => v.rawAt(i)) };
}

/** Every way to cut `raw` in two. */
const cuts = (raw: string): string[][] => Array.from({ length: raw.length + 1 }, (_, i) => [raw.slice(0, i), raw.slice(i)]);

describe('the text the output rules read', () => {
  it.each([
    ['{"a":"project \\u0062luebird"}', '{"a":"project bluebird"}'],
    ['bob\\u0040example.com', 'bob@example.com'],
    ['line\\nbreak \\"quoted\\" back\\\\slash \\/', 'line\nbreak "quoted" back\\slash /'],
    ['\\ud83d\\ude00 smile', '\u{1F600} smile'],
    ['not \\x an escape, nor \\u12 nor \\uZZZZ', 'not \\x an escape, nor \\u12 nor \\uZZZZ'],
    ['\\\\u0062 is a backslash and u0062', '\\u0062 is a backslash and u0062'],
    ['ends in \\u00', 'ends in \\u00'],
  ])('reads %j as %j, cut anywhere', (raw, expected) => {
    for (const pieces of cuts(raw)) expect(read(pieces).text).toBe(expected);
  });

  it('keeps where each character began, for masks', () => {
    const { text, starts } = read(['a\\u0062', 'c']);
    expect(text).toBe('abc');
    expect(starts).toEqual([0, 1, 7]);
  });

  it('reads a long run of filler as its first characters, and one of each kind it adds', () => {
    const zw = '\u200b'.repeat(1000);
    expect(read(['a', zw, 'b']).text).toBe(`a${'\u200b'.repeat(FILLER_RUN)}b`);
    expect(read(['a', zw, ' ', zw, 'b']).text).toBe(`a${'\u200b'.repeat(FILLER_RUN)} b`);
    expect(read(['e', '\u0301'.repeat(100), 'x']).text).toBe(`e${'\u0301'.repeat(FILLER_RUN)}x`);
    // Tag characters (surrogate pairs) are invisible too.
    expect(read(['a', '\u{E0041}'.repeat(100), 'b']).text.length).toBe(2 + 2 * FILLER_RUN);
  });

  it('grows by what a delta adds, not by what it held before', () => {
    const v = new TextView();
    let at = 0;
    v.append('hello', at); at += 5;
    for (let i = 0; i < 1000; i++) { v.append('\u200b'.repeat(100), at); at += 100; }
    expect(v.text.length).toBe(5 + FILLER_RUN);
    expect(v.rawAt(v.text.length)).toBe(at);
  });

  it('keeps each place through drops, escapes, pairs and dropped filler', () => {
    const pieces = ['ab\\u0063', '\\u00', '64 \\ud83d\\ude00', '\u{1F600}', 'x', '\u200b'.repeat(40), 'yz \\n', 'e'];
    const v = new TextView();
    const places: number[] = [];
    let dropped = 0;
    let at = 0;
    for (const [i, p] of pieces.entries()) {
      v.append(p, at);
      at += p.length;
      for (let k = places.length - dropped; k < v.text.length; k++) places.push(v.rawAt(k));
      // Every place read before a drop is the same after it, shifted by what was dropped.
      for (let k = 0; k < v.text.length; k++) expect(v.rawAt(k)).toBe(places[k + dropped]);
      const count = i % 3;
      v.drop(count);
      dropped += count;
    }
    // A surrogate pair as written begins where its high half does; the character after it where it does.
    const { text, starts } = read(['a\u{1F600}b']);
    expect(text).toBe('a\u{1F600}b');
    expect(starts).toEqual([0, 1, 1, 3]);
  });
});
