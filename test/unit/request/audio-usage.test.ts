import { readAudioUsage, speechUsage, TYPICAL_BYTES_PER_SECOND } from '../../../src/request/audio-usage';
import { rewriteAudio } from '../../../src/request/audio';
import { audioCost, compilePrices, tokenCost } from '../../../src/pricing/prices';
import type { AudioRequest } from '../../../src/contract/types';

const upload = (seconds?: number): AudioRequest => ({ model: 'w', fields: { prompt: 'p' }, texts: ['p'], seconds, boundSeconds: seconds ?? 10, characters: 0 });

describe('readAudioUsage', () => {
  it.each([
    ['OpenAI\'s usage.seconds', { type: 'duration', seconds: 12.5 }, undefined, undefined, { audio_seconds: 12.5, prompt_tokens: 0, estimated: false }],
    ['verbose_json\'s duration', undefined, 3.25, undefined, { audio_seconds: 3.25, estimated: false }],
    ['the backend over the WAV header', { seconds: 2 }, undefined, 1.5, { audio_seconds: 2, estimated: false }],
    ['the WAV header when the backend says nothing', undefined, undefined, 0.4, { audio_seconds: 0.4, estimated: false }],
    ['OpenAI\'s tokens with the WAV\'s seconds', { type: 'tokens', input_tokens: 14, output_tokens: 45, total_tokens: 59 }, undefined, 1, { prompt_tokens: 14, completion_tokens: 45, total_tokens: 59, audio_seconds: 1, estimated: false }],
    ['vLLM\'s stream usage', { prompt_tokens: 7, completion_tokens: 9 }, undefined, 1, { prompt_tokens: 7, completion_tokens: 9, total_tokens: 16 }],
    ['nonsense seconds ignored', { seconds: -1 }, 'ten', 0.5, { audio_seconds: 0.5, estimated: false }],
    ['a day or more ignored', { seconds: 86_400 }, undefined, 0.5, { audio_seconds: 0.5 }],
  ])('%s', (_what, raw, duration, wav, expected) => {
    expect(readAudioUsage(raw, duration, upload(wav as number | undefined), 1000)).toMatchObject(expected);
  });

  it('estimates from the file\'s size when nothing says, and marks it', () => {
    expect(readAudioUsage(undefined, undefined, upload(), 3 * TYPICAL_BYTES_PER_SECOND)).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, audio_seconds: 3, estimated: true });
  });

  it('keeps seconds to the millisecond', () => {
    expect(readAudioUsage({ seconds: 1.23456 }, undefined, upload(), 0).audio_seconds).toBe(1.235);
  });
});

describe('audio prices', () => {
  const prices = compilePrices([{ model: 'whisper', input: 0, output: 0, audioMinute: 0.006, characters: 0 }, { model: 'tts', input: 0, output: 0, audioMinute: 0, characters: 15 }, { model: 'gpt-4o-transcribe', input: 2.5, output: 10, audioMinute: 0, characters: 0 }]);

  it('prices seconds per minute of audio, characters per million, tokens as tokens', () => {
    expect(tokenCost(prices.of('whisper')!, { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, audio_seconds: 90, estimated: false })).toBe(0.009);
    expect(tokenCost(prices.of('tts')!, speechUsage({ model: 'tts', fields: { input: 'x' }, texts: ['x'], boundSeconds: 0, characters: 1000 }))).toBe(0.015);
    expect(tokenCost(prices.of('gpt-4o-transcribe')!, { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100, audio_seconds: 60, estimated: false })).toBe(0.0035);
    expect(audioCost(prices.of('whisper')!, 60, 0)).toBeCloseTo(0.006, 12);
  });
});

describe('rewriteAudio', () => {
  it('rewrites each text field, the characters of speech\'s input with it; undefined when nothing changed', () => {
    const speech: AudioRequest = { model: 't', fields: { input: 'mail a@b.c now', instructions: 'calm' }, texts: ['mail a@b.c now', 'calm'], boundSeconds: 0, characters: 14 };
    const out = rewriteAudio(speech, (s) => s.replace('a@b.c', '[EMAIL]'))!;
    expect(out.fields).toEqual({ input: 'mail [EMAIL] now', instructions: 'calm' });
    expect(out.texts).toEqual(['mail [EMAIL] now', 'calm']);
    expect(out.characters).toBe(16);
    expect(rewriteAudio(speech, (s) => s)).toBeUndefined();
    expect(rewriteAudio(upload(1), (s) => `${s}!`)).toMatchObject({ fields: { prompt: 'p!' }, characters: 0 });
  });
});
