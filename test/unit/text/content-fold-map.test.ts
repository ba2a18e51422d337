// The streaming fold gives the readings the request fold gives, and says
// where each folded character came from in the text as written.
import { compose, foldReadings, lightReading } from '../../../src/text/fold';
import { foldedAt, foldMapped, sourceOf } from '../../../src/text/fold-map';

const SAMPLES = [
  'plain ascii text', 'tabs\tand  runs\n\nof whitespace', 'ＦＵＬＬ－ｗｉｄｔｈ', 'ligature ﬁne', 'café naïve', 'strike̶d ou̶t',
  'zero\u200Bwidth\u200Dsplit', 'soft\u00ADhyphen', 'Cyrillic bаnаnа', 'Greek Αlpha', 'math 𝐛𝐨𝐥𝐝', 'emoji 🙂 and text',
  'variation\uFE0Fselector', 'nbsp\u00A0space', 'Ⓒⓘⓡⓒⓛⓔⓓ', 'ǅemal', 'é and e\u0301', 'e\u200B\u0301 mark past an invisible', '\u0301 leading mark', 'हिन्दी पाठ', '日本語のテキスト',
  'cre\u0301dit card', 'cr\u00e9dit c\u0327ard', 'braille\u2800blank', 'null\u{1d159}notehead', 'Vi\u1ec7t Nam', 'k\u17b4hmer', 'var\u{e0100}sel', 'ＣＲＥ\u0301ＤＩＴ',
];

describe('foldMapped', () => {
  it.each(SAMPLES)('folds %j as the request fold does, in every reading', (text) => {
    const { folded, light } = foldMapped(text, true);
    const composed = compose(text);
    expect([...new Set(folded.map((r) => r.text))]).toEqual([...new Set(foldReadings(composed))]);
    expect(light!.text).toBe(lightReading(composed));
  });

  it.each(SAMPLES)('folds %j as the request fold does with accents exact', (text) => {
    const { folded } = foldMapped(text, false, 'exact');
    expect([...new Set(folded.map((r) => r.text))]).toEqual([...new Set(foldReadings(compose(text), 'exact'))]);
  });

  it('maps a term found past a combining accent back to the letters and the accent', () => {
    const text = 'my cre\u0301dit card';
    const [reading] = foldMapped(text).folded;
    expect(reading.text).toBe('my credit card');
    const at = reading.text.indexOf('credit card');
    expect(sourceOf(reading, at, at + 'credit card'.length)).toEqual([3, text.length]);
    expect(sourceOf(reading, 5, 6)).toEqual([5, 7]); // the e and its accent are one
    expect(foldedAt(reading, 7)).toBe(6);
  });

  it('reads a braille blank between words as nothing and as a space, each mapped to the text as written', () => {
    const text = 'credit\u2800card ok';
    const { folded } = foldMapped(text);
    expect(folded.map((r) => r.text)).toEqual(['creditcard ok', 'credit card ok']);
    expect(sourceOf(folded[0], 0, 10)).toEqual([0, 11]);
    expect(sourceOf(folded[1], 6, 7)).toEqual([6, 7]);
    expect(sourceOf(folded[1], 0, 11)).toEqual([0, 11]);
  });

  it('maps a composed accent that folds away, in either mode', () => {
    const text = 'p\u00eacheur!';
    expect(foldMapped(text).folded[0].text).toBe('pecheur!');
    expect(foldMapped(text, false, 'exact').folded[0].text).toBe('p\u00eacheur!');
    expect(sourceOf(foldMapped(text).folded[0], 0, 7)).toEqual([0, 7]);
  });

  it('maps a match on the folded text back to the text as written', () => {
    const text = 'say ｂｌｕｅ\u200Bbird now';
    const [reading] = foldMapped(text).folded;
    const at = reading.text.indexOf('bluebird');
    expect(text.slice(...sourceOf(reading, at, at + 'bluebird'.length))).toBe('ｂｌｕｅ\u200Bbird');
  });

  it('maps a collapsed whitespace run to the whole run', () => {
    const text = 'a \t\n b';
    const [reading] = foldMapped(text).folded;
    expect(reading.text).toBe('a b');
    expect(sourceOf(reading, 1, 2)).toEqual([1, 5]);
  });

  it('finds the folded position of an original one', () => {
    const [reading] = foldMapped('ﬁne ＡＢ').folded;
    expect(reading.text).toBe('fine AB');
    expect(foldedAt(reading, 1)).toBe(2);
    expect(foldedAt(reading, 4)).toBe(5);
  });
});
