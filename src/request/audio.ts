// The request view of an audio endpoint, rewritten: each text field (a
// transcription's prompt, speech's input and instructions) through a rewrite
// (redaction), the view made again; speech is priced by the characters of
// the input as the backend gets it.
import type { AudioRequest } from '../contract/types';
import type { Rewrite } from './rewrite-strings';

/** The view with every text field rewritten through `fn`; undefined when none changed. */
export function rewriteAudio(audio: AudioRequest, fn: Rewrite): AudioRequest | undefined {
  let fields: Record<string, string> | undefined;
  for (const name in audio.fields) {
    const next = fn(audio.fields[name]);
    if (next !== audio.fields[name]) (fields ??= { ...audio.fields })[name] = next;
  }
  if (fields === undefined) return undefined;
  return { ...audio, fields, texts: Object.values(fields), characters: fields.input?.length ?? 0 };
}
