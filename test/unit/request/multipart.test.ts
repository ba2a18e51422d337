import { boundaryOf, encodeMultipart, MAX_PARTS, parseMultipart } from '../../../src/request/multipart';

const B = 'XyZ-boundary';
const body = (...parts: string[]): Buffer => Buffer.from(`${parts.join('')}--${B}--\r\n`, 'latin1');
const field = (name: string, value: string): string => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

describe('boundaryOf', () => {
  it.each([
    ['multipart/form-data; boundary=abc', 'abc'],
    ['multipart/form-data; charset=utf-8; boundary="a b;c"', 'a b;c'],
    ['Multipart/Form-Data;boundary=----WebKitFormBoundary7MA4', '----WebKitFormBoundary7MA4'],
    ['application/json', undefined],
    ['multipart/form-data', undefined],
    ['multipart/mixed; boundary=abc', undefined],
    [`multipart/form-data; boundary=${'x'.repeat(71)}`, undefined],
    [undefined, undefined],
  ])('%s → %s', (type, expected) => expect(boundaryOf(type)).toBe(expected));
});

describe('parseMultipart', () => {
  it('reads fields and a file part, the file\'s bytes untouched (CRLF and the boundary\'s prefix inside it)', () => {
    const audio = Buffer.from([0x52, 0x49, 0x46, 0x46, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0xff]);
    const raw = Buffer.concat([
      Buffer.from(`preamble\r\n${field('model', 'whisper')}--${B}\r\nContent-Disposition: form-data; name="file"; filename="a \\"b\\".wav"\r\nContent-Type: audio/wav\r\n\r\n`, 'latin1'),
      audio,
      Buffer.from(`\r\n${field('prompt', 'héllo\r\nworld')}--${B}--\r\n`, 'utf8'),
    ]);
    const parts = parseMultipart(raw, B);
    expect(parts.map((p) => p.name)).toEqual(['model', 'file', 'prompt']);
    expect(parts[1]).toMatchObject({ filename: 'a "b".wav', contentType: 'audio/wav' });
    expect(parts[1].data.equals(audio)).toBe(true);
    expect(parts[2].data.toString('utf8')).toBe('héllo\r\nworld');
  });

  it('round-trips through encodeMultipart', () => {
    const parts = parseMultipart(body(field('model', 'm'), field('language', 'en')), B);
    const again = parseMultipart(encodeMultipart([...parts, { name: 'file', filename: 'x.wav', contentType: 'audio/wav', data: Buffer.from('RIFF') }], B), B);
    expect(again.map((p) => [p.name, p.data.toString()])).toEqual([['model', 'm'], ['language', 'en'], ['file', 'RIFF']]);
    expect(again[2].filename).toBe('x.wav');
  });

  it('encodes names and filenames so they cannot add headers', () => {
    const encoded = encodeMultipart([{ name: 'a"\r\nX-Evil: 1', filename: 'f\r\n.wav', data: Buffer.from('d') }], B).toString('latin1');
    expect(encoded).not.toMatch(/\r\nX-Evil/);
    expect(parseMultipart(Buffer.from(encoded, 'latin1'), B)[0].name).toBe('a"  X-Evil: 1');
  });

  it.each([
    ['no boundary at all', 'just text'],
    ['no line end after a boundary', `--${B}X`],
    ['headers that never end', `--${B}\r\nContent-Disposition: form-data; name="a"\r\n`],
    ['no closing boundary', `--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue`],
    ['a part without a disposition', `--${B}\r\nContent-Type: text/plain\r\n\r\nv\r\n--${B}--`],
    ['a part without a name', `--${B}\r\nContent-Disposition: form-data; filename="x"\r\n\r\nv\r\n--${B}--`],
    ['a header without a colon', `--${B}\r\nnonsense\r\n\r\nv\r\n--${B}--`],
  ])('refuses %s with a 400', (_what, raw) => {
    expect(() => parseMultipart(Buffer.from(raw, 'latin1'), B)).toThrow(expect.objectContaining({ status: 400, reason: 'invalid_request' }));
  });

  it(`refuses more than ${MAX_PARTS} parts`, () => {
    const many = body(...Array.from({ length: MAX_PARTS + 1 }, (_, i) => field(`f${i}`, 'v')));
    expect(() => parseMultipart(many, B)).toThrow(/more than 64 parts/);
    expect(parseMultipart(body(...Array.from({ length: MAX_PARTS }, (_, i) => field(`f${i}`, 'v'))), B)).toHaveLength(MAX_PARTS);
  });
});
