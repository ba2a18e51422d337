import { wavSeconds } from '../../../src/request/wav';
import { sineWav } from '../../support/audio-backend';

/** A RIFF/WAVE header: `rate` Hz, `channels`, `bits`, then `extra` chunks before data of `dataBytes` (declared as `declared`). */
function wav(rate: number, channels: number, bits: number, dataBytes: number, declared = dataBytes, extra: Buffer = Buffer.alloc(0)): Buffer {
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'latin1');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(1, 8);
  fmt.writeUInt16LE(channels, 10);
  fmt.writeUInt32LE(rate, 12);
  fmt.writeUInt32LE((rate * channels * bits) / 8, 16);
  fmt.writeUInt16LE((channels * bits) / 8, 20);
  fmt.writeUInt16LE(bits, 22);
  const data = Buffer.alloc(8);
  data.write('data', 0, 'latin1');
  data.writeUInt32LE(declared, 4);
  const head = Buffer.from('RIFF\0\0\0\0WAVE', 'latin1');
  return Buffer.concat([head, fmt, extra, data, Buffer.alloc(dataBytes)]);
}

describe('wavSeconds', () => {
  it.each([
    [16_000, 1, 16, 32_000, 1],
    [44_100, 2, 16, 44_100 * 4 / 2, 0.5],
    [8_000, 1, 8, 2_000, 0.25],
    [48_000, 2, 24, 48_000 * 6 * 3, 3],
  ])('%i Hz, %i channels, %i bits, %i bytes: %f s', (rate, channels, bits, bytes, seconds) => {
    expect(wavSeconds(wav(rate, channels, bits, bytes))).toBeCloseTo(seconds, 9);
  });

  it('reads the test\'s own sine wave', () => expect(wavSeconds(sineWav(400))).toBeCloseTo(0.4, 9));

  it('skips other chunks (LIST, odd sizes padded) before data', () => {
    const list = Buffer.concat([Buffer.from('LIST', 'latin1'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc\0', 'latin1')]);
    expect(wavSeconds(wav(16_000, 1, 16, 16_000, 16_000, list))).toBeCloseTo(0.5, 9);
  });

  it('counts the bytes that came when the data size is unknown (streamed) or larger than the file', () => {
    expect(wavSeconds(wav(16_000, 1, 16, 16_000, 0xffffffff))).toBeCloseTo(0.5, 9);
    expect(wavSeconds(wav(16_000, 1, 16, 16_000, 0))).toBeCloseTo(0.5, 9);
    expect(wavSeconds(wav(16_000, 1, 16, 16_000, 64_000))).toBeCloseTo(0.5, 9);
  });

  it.each([
    ['an mp3', Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1')],
    ['empty', Buffer.alloc(0)],
    ['RIFF but not WAVE', Buffer.from('RIFF\0\0\0\0AVI LIST', 'latin1')],
    ['data before fmt', Buffer.from('RIFF\0\0\0\0WAVEdata\x04\0\0\0abcd', 'latin1')],
    ['a zero byte rate', wav(0, 1, 16, 100)],
  ])('undefined for %s', (_what, bytes) => expect(wavSeconds(bytes)).toBeUndefined());
});
