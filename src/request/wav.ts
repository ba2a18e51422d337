// The duration of a WAV file (RIFF/WAVE, PCM or any codec with a byte rate)
// from its header: the data chunk's size over the fmt chunk's byte rate
// (sample rate × channels × bits / 8). Undefined for anything else: the
// gateway decodes no compressed audio.
//
//   wavSeconds(bytes) // 0.5 for half a second of 16 kHz mono 16-bit PCM
/** Chunks walked before giving up: a real file has fmt, maybe LIST or fact, then data. */
const MAX_CHUNKS = 32;

export function wavSeconds(bytes: Buffer): number | undefined {
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let at = 12;
  let byteRate: number | undefined;
  for (let i = 0; i < MAX_CHUNKS && at + 8 <= bytes.length; i++) {
    const id = bytes.toString('latin1', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === 'fmt ' && size >= 16 && at + 24 <= bytes.length) {
      const channels = bytes.readUInt16LE(at + 10);
      const sampleRate = bytes.readUInt32LE(at + 12);
      const bits = bytes.readUInt16LE(at + 22);
      const rate = bytes.readUInt32LE(at + 16);
      // The declared byte rate, checked against the one its fields imply when they say (PCM).
      byteRate = bits > 0 && channels > 0 ? (sampleRate * channels * bits) / 8 : rate;
    } else if (id === 'data') {
      if (byteRate === undefined || !(byteRate > 0)) return undefined;
      // A streamed WAV says 0 or 0xFFFFFFFF: the bytes that came are the data.
      const data = size === 0 || size === 0xffffffff ? bytes.length - at - 8 : Math.min(size, bytes.length - at - 8);
      return data / byteRate;
    }
    at += 8 + size + (size % 2);
  }
  return undefined;
}
