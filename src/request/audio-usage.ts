// What an audio request used. A transcription or translation: seconds of
// audio, the backend's where it says (OpenAI's `usage.seconds`, verbose_json's
// `duration`), else the WAV header's, else an estimate from the file's size
// at a typical compressed rate, marked estimated; and the tokens a backend
// reports (OpenAI's newer models: `input_tokens`, `output_tokens`; vLLM's
// stream: `prompt_tokens`, `completion_tokens`). Speech: the characters of
// its input, known before it is sent.
import type { AudioRequest, Usage } from '../contract/types';

/** A typical compressed file's bytes a second (128 kbit/s): the estimate, marked so, when nothing says better. */
export const TYPICAL_BYTES_PER_SECOND = 16_000;

const count = (v: unknown): number | undefined => (Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : undefined);
/** Seconds as a backend writes them: a finite number, not negative, under a day of audio (anything else is nonsense, ignored). */
const seconds = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v < 86_400 ? v : undefined);
/** Seconds are kept to the millisecond: costs and records agree however they are summed. */
const toMs = (s: number): number => Math.round(s * 1000) / 1000;

/** The usage of a transcription or translation: `raw` the answer's `usage`, `duration` its verbose_json duration, `fileBytes` the upload's size. */
export function readAudioUsage(raw: unknown, duration: unknown, audio: AudioRequest, fileBytes: number): Usage {
  const u = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const input = count(u.input_tokens) ?? count(u.prompt_tokens) ?? 0;
  const output = count(u.output_tokens) ?? count(u.completion_tokens) ?? 0;
  const reported = seconds(u.seconds) ?? seconds(duration);
  const measured = reported ?? audio.seconds;
  return {
    prompt_tokens: input, completion_tokens: output, total_tokens: input + output,
    audio_seconds: toMs(measured ?? fileBytes / TYPICAL_BYTES_PER_SECOND),
    estimated: measured === undefined,
  };
}

/** Speech's usage: the characters of its input as sent. */
export const speechUsage = (audio: AudioRequest): Usage =>
  ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, characters: audio.characters, estimated: false });
