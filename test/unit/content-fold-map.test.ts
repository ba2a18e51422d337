// The streaming fold gives the readings the request fold gives, and says
// where each folded character came from in the text as written.
import { compose, foldReadings, lightReading } from '../../plugins/content-filter/fold';
import { foldedAt, foldMapped, sourceOf } from '../../plugins/content-filter/fold-map';

const SAMPLES = [
  'plain ascii text', 'tabs\tand  runs\n\nof whitespace', 'ＦＵＬＬ－ｗｉｄｔｈ', 'ligature ﬁne', 'café naïve', 'strike̶d ou̶t',
  'zero\u200Bwidth\u200Dsplit', 'soft\u00ADhyphen', 'Cyrillic bаnаnа', 'Greek Αlpha', 'math 𝐛𝐨𝐥𝐝', 'emoji 🙂 and text',
  'variation\uFE0Fselector', 'nbsp\u00A0space', 'Ⓒⓘⓡⓒⓛⓔⓓ', 'ǅemal', 'é and e\u0301', 'e\u200B\u0301 mark past an invisible', '\u0301 leading mark', 'हिन्दी पाठ', '日本語のテキスト',
];

describe('foldMapped', () => {
  it.each(SAMPLES)('folds %j as the request fold does, in every reading', (text) => {
    const { folded, light } = foldMapped(text, true);
    const composed = compose(text);
    expect([...new Set(folded.map((r) => r.text))]).toEqual([...new Set(foldReadings(composed))]);
    expect(light!.text).toBe(lightReading(composed));
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
