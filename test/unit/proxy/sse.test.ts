import { SseParser } from '../../../src/proxy/sse';

/** Feeds the chunks in order and returns every event's data. */
function parse(chunks: string[]): string[] {
  const out: string[] = [];
  const parser = new SseParser((data) => out.push(data));
  for (const chunk of chunks) parser.push(chunk);
  return out;
}

/** Every way of cutting `text` into two or three chunks, plus one byte at a time. */
function splits(text: string): string[][] {
  const all: string[][] = [];
  for (let i = 0; i <= text.length; i++) {
    all.push([text.slice(0, i), text.slice(i)]);
    for (let j = i; j <= text.length; j++) all.push([text.slice(0, i), text.slice(i, j), text.slice(j)]);
  }
  all.push([...text]);
  return all;
}

describe('SseParser', () => {
  it('hands over the data of each event', () => {
    expect(parse(['data: {"a":1}\n\ndata: [DONE]\n\n'])).toEqual(['{"a":1}', '[DONE]']);
  });

  it('gives the same events wherever the chunks are split', () => {
    const text = 'data: {"a":1}\n\ndata:{"b":2}\n\n: keep-alive\n\nevent: x\ndata: one\ndata: two\n\ndata: [DONE]\n\n';
    const expected = ['{"a":1}', '{"b":2}', 'one\ntwo', '[DONE]'];
    for (const chunks of splits(text)) expect(parse(chunks)).toEqual(expected);
  });

  it('accepts CRLF and lone CR line endings, split anywhere', () => {
    for (const text of ['data: a\r\n\r\ndata: b\r\n\r\n', 'data: a\r\rdata: b\r\r', 'data: a\r\n\ndata: b\n\r\n']) {
      for (const chunks of splits(text)) expect(parse(chunks)).toEqual(['a', 'b']);
    }
  });

  it('hands over an event ended by a trailing CR without waiting for more bytes', () => {
    expect(parse(['data: a\r\r'])).toEqual(['a']);
    expect(parse(['data: a\r', '\r'])).toEqual(['a']);
  });

  it('joins the lines of a multi-line event with a newline', () => {
    expect(parse(['data: first\ndata: second\ndata:third\n\n'])).toEqual(['first\nsecond\nthird']);
  });

  it('skips comments and events without data, and ignores event/id/retry fields', () => {
    expect(parse([': ping\n\nevent: ping\n\nid: 7\nretry: 100\ndata: x\n\n'])).toEqual(['x']);
  });

  it('removes only one space after the colon', () => {
    expect(parse(['data:  two spaces\n\ndata:none\n\n'])).toEqual([' two spaces', 'none']);
  });

  it('keeps an empty data line as an empty event', () => {
    expect(parse(['data:\n\n'])).toEqual(['']);
  });

  it('tolerates extra blank lines between events', () => {
    expect(parse(['data: a\n\n\n\ndata: b\n\n'])).toEqual(['a', 'b']);
  });

  it('emits an event as soon as its blank line arrives, not later', () => {
    const out: string[] = [];
    const parser = new SseParser((data) => out.push(data));
    parser.push('data: a\n');
    expect(out).toEqual([]);
    parser.push('\ndata: b');
    expect(out).toEqual(['a']);
    parser.push('\n\n');
    expect(out).toEqual(['a', 'b']);
  });

  it('keeps data containing colons and JSON intact', () => {
    const json = JSON.stringify({ choices: [{ delta: { content: 'a: b\\n\ndata: c' } }] });
    expect(parse([`data: ${json}\n\n`])).toEqual([json]);
  });

  it('hands over each event\'s event: name with its data, wherever the chunks are split', () => {
    const text = 'event: message_start\ndata: {"a":1}\n\ndata: plain\n\nevent:delta\nid: 3\ndata: x\n\n';
    for (const chunks of splits(text)) {
      const out: Array<[string, string | undefined]> = [];
      const parser = new SseParser((data, event) => out.push([data, event]));
      for (const chunk of chunks) parser.push(chunk);
      expect(out).toEqual([['{"a":1}', 'message_start'], ['plain', undefined], ['x', 'delta']]);
    }
  });

  it('refuses an event past the cap, counting the chunks kept so far, and parses the next stream afresh', () => {
    const out: string[] = [];
    const parser = new SseParser((data) => out.push(data), 10, () => new Error('too large'));
    parser.push('data: 1234');
    expect(() => parser.push('56789')).toThrow('too large');
    parser.push('data: ok\n\n');
    expect(out).toEqual(['ok']);
  });

  it('lets a complete event through that a later unfinished one would push past the cap', () => {
    const out: string[] = [];
    const parser = new SseParser((data) => out.push(data), 12);
    parser.push('data: abcdef\n\ndata: ghij');
    expect(out).toEqual(['abcdef']);
  });

  it('joins an event kept over many chunks once, when its blank line arrives', () => {
    const out: string[] = [];
    const parser = new SseParser((data) => out.push(data));
    parser.push('data: ');
    for (let i = 0; i < 1000; i++) parser.push('y'.repeat(100));
    expect(out).toEqual([]);
    parser.push('\n');
    parser.push('\ndata: next\n\n');
    expect(out).toEqual(['y'.repeat(100_000), 'next']);
  });
});
