// The output mechanism's sliding window, on rules made for the test and on
// the content filter's: a match split across pieces never goes out, text
// that cannot begin a match goes out at once, a mask goes on, a block ends
// the part, and several plugins' windows chain.
import type { OutputMatch, OutputRules } from '../../../src/contract/plugin';
import { OutputText } from '../../../src/output-rules/text';
import { outputRules } from '../../../plugins/content-filter/output';

/** Rules that find literal words and hold a trailing prefix of one, as a plugin would. */
function literal(words: string[], action: 'block' | 'mask'): OutputRules {
  return {
    maxHoldChars: Math.max(...words.map((w) => w.length)),
    scan(text, from) {
      const matches: OutputMatch[] = [];
      for (const w of words) for (let i = text.indexOf(w, from); i >= 0; i = text.indexOf(w, i + 1)) matches.push({ start: i, end: i + w.length, kind: 'word', action, replacement: action === 'mask' ? '#'.repeat(w.length) : undefined });
      matches.sort((a, b) => a.start - b.start);
      let holdFrom = text.length;
      for (let p = Math.max(from, text.length - this.maxHoldChars + 1); p < text.length; p++) {
        if (words.some((w) => w.startsWith(text.slice(p)))) { holdFrom = p; break; }
      }
      return { matches, holdFrom };
    },
  };
}

/** Pushes the pieces as one part, then ends it: what went out after each, and the match that cut it. */
function stream(rules: Array<[string, OutputRules]>, pieces: string[]) {
  const note: { filtered?: string } = {};
  const out = new OutputText({ rules: rules.map(([plugin, r]) => ({ plugin, rules: r })) }, note as never);
  const sent = pieces.map((p) => out.push('0:c', p));
  sent.push(out.end('0:c'));
  return { sent, text: sent.join(''), blocked: out.blocked, filtered: note.filtered };
}

/** `text` cut into `n` pieces of about the same length. */
const split = (text: string, n: number): string[] => Array.from({ length: n }, (_, i) => text.slice(Math.floor((i * text.length) / n), Math.floor(((i + 1) * text.length) / n)));

describe('the output window', () => {
  const block = literal(['bluebird'], 'block');

  it.each([2, 3, 10])('never sends a blocked word split across %i pieces, nor anything after it', (n) => {
    const { text, blocked, filtered } = stream([['t', block]], split('the plan is bluebird, then more', n));
    expect(text).toBe('the plan is ');
    expect(blocked).toMatchObject({ kind: 'word', action: 'block' });
    expect(filtered).toBe('block');
  });

  it('sends text that cannot begin a match at once, piece for piece', () => {
    const pieces = ['Hello', ' world', ', how are', ' you?'];
    expect(stream([['t', block]], pieces).sent).toEqual([...pieces, '']);
  });

  it('holds back only what could still begin a match, and lets it go once it cannot', () => {
    expect(stream([['t', block]], ['a blue', 'berry']).sent).toEqual(['a ', 'blueberry', '']);
    expect(stream([['t', block]], ['a blue']).sent).toEqual(['a ', 'blue']);
  });

  it('masks a match split across pieces and goes on', () => {
    const mask = literal(['bluebird'], 'mask');
    const { text, blocked, filtered } = stream([['t', mask]], split('one bluebird, two bluebirds, done', 10));
    expect(text).toBe('one ########, two ########s, done');
    expect(blocked).toBeUndefined();
    expect(filtered).toBe('mask');
  });

  it('chains plugins: what one releases, the next reads', () => {
    const { text, blocked } = stream([['a', literal(['cat'], 'mask')], ['b', literal(['dog ###'], 'block')]], ['the dog c', 'at ran']);
    expect(text).toBe('the ');
    expect(blocked).toMatchObject({ kind: 'word' });
  });
});

describe('the window on the content filter\'s output rules', () => {
  const rules = outputRules({ terms: ['project bluebird', 'secret'], patterns: [], action: 'block', mask: '[x]' })!;
  const masking = outputRules({ terms: ['project bluebird', 'secret'], patterns: [], action: 'mask', mask: '[x]' })!;

  it.each([2, 3, 10])('catches a term split across %i pieces, folded as a reader sees it', (n) => {
    for (const answer of ['We call it Project  Bluebird today', 'We call it ｐｒｏｊｅｃｔ ｂｌｕｅｂｉｒｄ today', 'We call it pro\u200Bject blue\u00ADbird today', 'We call it projеct bluebird today']) {
      const { text, blocked } = stream([['cf', rules]], split(answer, n));
      expect(text).toBe('We call it ');
      expect(blocked?.kind).toBe('term');
    }
  });

  it('catches the term however the answer is cut, one character a piece included', () => {
    const answer = 'Our Project Bluebird launch';
    for (let n = 1; n <= answer.length; n++) {
      const { text, blocked } = stream([['cf', rules]], split(answer, n));
      expect([n, text, blocked?.kind]).toEqual([n, 'Our ', 'term']);
    }
  });

  it('lets a word that only begins like a term go, whole words only', () => {
    expect(stream([['cf', rules]], split('the secretary keeps secrets', 10)).text).toBe('the secretary keeps secrets');
  });

  it('sends an answer with no match as it came, piece for piece', () => {
    const pieces = ['The', ' quick', ' brown', ' fox', ' jumps', '.'];
    expect(stream([['cf', rules]], pieces).sent).toEqual([...pieces, '']);
  });

  it('masks in the text as written, whatever the folding saw', () => {
    expect(stream([['cf', masking]], split('a ＳＥＣＲＥＴ and a s\u200Becret, no secrets', 7)).text).toBe('a [x] and a [x], no secrets');
  });

  it('holds a pattern back for its declared length', () => {
    const p = outputRules({ terms: [], patterns: [{ pattern: '\\bAKIA[0-9A-Z]{16}\\b', maxChars: 20 }], action: 'mask', mask: '[key]' })!;
    expect(p.maxHoldChars).toBe(20);
    expect(stream([['cf', p]], split('key AKIAIOSFODNN7EXAMPLE here', 10)).text).toBe('key [key] here');
  });
});

describe('the window on text that stops and goes on, escapes and filler', () => {
  const rules = outputRules({ terms: ['project bluebird'], patterns: [], action: 'block', mask: '[x]' })!;
  const masking = outputRules({ terms: ['project bluebird'], patterns: [], action: 'mask', mask: '[x]' })!;
  const text = (r = rules) => new OutputText({ rules: [{ plugin: 'cf', rules: r }] }, {} as never);

  it('catches a term whose text stopped between its words and went on (a tool call between, an early finish)', () => {
    const out = text();
    const sent = [out.push('0:c', 'ok project '), out.flush('0:c'), out.push('0:c', 'blue'), out.push('0:c', 'bird done'), out.end('0:c')];
    expect(sent.join('')).toBe('ok project ');
    expect(out.blocked).toMatchObject({ kind: 'term' });
  });

  it('masks the rest of such a term and goes on', () => {
    const out = text(masking);
    const sent = [out.push('0:c', 'ok project'), out.flush('0:c'), out.push('0:c', ' bluebird done'), out.end('0:c')];
    expect(sent.join('')).toBe('ok project[x] done');
    expect(out.blocked).toBeUndefined();
  });

  it('lets go of text a flush ended when what follows cannot complete a match', () => {
    const out = text();
    const sent = [out.push('0:c', 'a project '), out.flush('0:c'), out.push('0:c', 'plan'), out.end('0:c')];
    expect(sent).toEqual(['a ', 'project ', 'plan', '']);
  });

  it.each([2, 5, 12])('reads JSON escapes in arguments cut into %i pieces; a mask leaves valid JSON', (n) => {
    const raw = '{"a":"project \\u0062luebird","b":"x"}';
    const blocked = text();
    split(raw, n).forEach((p) => blocked.push('0:t0', p, 'json'));
    blocked.end('0:t0');
    expect(blocked.blocked).toBeDefined();
    const quoted = outputRules({ terms: ['project bluebird'], patterns: [], action: 'mask', mask: '"q"\\' })!;
    const masked = text(quoted);
    const out = [...split(raw, n).map((p) => masked.push('0:t0', p, 'json')), masked.end('0:t0')].join('');
    expect(JSON.parse(out)).toEqual({ a: '"q"\\', b: 'x' });
  });

  it('reads a long run of zero-width spaces once: the rules see a bounded text whatever the run', () => {
    let longest = 0;
    let scans = 0;
    const counting = { ...rules, scan: (t: string, from: number) => { scans++; longest = Math.max(longest, t.length); return rules.scan(t, from); } };
    for (const start of ['hello ', 'ok project ']) {
      const out = new OutputText({ rules: [{ plugin: 'cf', rules: counting }] }, {} as never);
      let sent = out.push('0:c', start);
      for (let i = 0; i < 1000; i++) sent += out.push('0:c', '\u200b'.repeat(100));
      sent += out.push('0:c', 'bluebird done') + out.end('0:c');
      if (start === 'hello ') expect(sent).toBe(`hello ${'\u200b'.repeat(100_000)}bluebird done`);
      else expect(out.blocked).toBeDefined();
    }
    expect(longest).toBeLessThan(200);
    expect(scans).toBeLessThan(20);
  });

  it('sends filler after the last text that could begin a match at once', () => {
    const out = text();
    expect(out.push('0:c', 'hello ')).toBe('hello ');
    expect(out.push('0:c', '\u200b\u200b')).toBe('\u200b\u200b');
  });
});
