// A scripted speech-to-text and text-to-speech server in the shapes OpenAI
// and vLLM answer, and the WAV files the tests send. /v1/audio/transcriptions
// and /translations read the multipart body with the platform's own parser
// (Response.formData, not the gateway's) and answer in the asked format: json
// (with OpenAI's `usage.seconds`), verbose_json (`duration`), text, srt, vtt,
// or a vLLM event stream (three deltas, then [DONE]; for model `whisper-held`
// the first delta at once and the rest on `release`; for `whisper-events`
// OpenAI's transcript.text.delta events and .done). The seconds it reports
// are the WAV's own (its data bytes over 16 kHz mono 16-bit), unless the
// model is `whisper-fixed` (always FIXED_SECONDS). /v1/audio/speech writes its
// first bytes at once and, for voice `held`, the rest only when `release` is
// called (or after 10 s), so a test can see the first bytes arrive while it
// is still speaking.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FIXED_SECONDS = 12.5;
const RATE = 16_000;

/** `ms` of a 440 Hz sine at 16 kHz, mono, 16-bit PCM, with its RIFF header. */
export function sineWav(ms: number): Buffer {
  const samples = Math.round((RATE * ms) / 1000);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'latin1');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'latin1');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(RATE, 24);
  wav.writeUInt32LE(RATE * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'latin1');
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) wav.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / RATE) * 12_000), 44 + i * 2);
  return wav;
}

export interface AudioRecord {
  path: string;
  contentType: string;
  /** The form's text fields (an upload), or the JSON body (speech). */
  fields: Record<string, unknown>;
  file?: { name: string; type: string; bytes: Buffer };
  /** The seconds it reported (an upload). */
  seconds?: number;
}

export interface AudioBackend {
  base: string;
  requests: AudioRecord[];
  /** Lets every speech answer and transcription stream held so far finish. */
  release(): void;
  /** Speech answers finished. */
  spoken: number;
  close(): Promise<void>;
}

export const TRANSCRIPT = 'a tone at four hundred and forty hertz';
export const SPEECH_HEAD = Buffer.from('ID3\x04\x00first-frames', 'latin1');
export const SPEECH_TAIL = Buffer.alloc(32 * 1024, 0x55);

/** `hold`: called with the rest of a stream, which waits for it (model `whisper-held`); else the rest goes at once. */
function uploadAnswer(res: ServerResponse, fields: Record<string, string>, seconds: number, hold: (rest: () => void) => void): void {
  const format = fields.response_format ?? 'json';
  if (fields.stream === 'true') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const words = TRANSCRIPT.split(' ');
    const thirds = [words.slice(0, 3), words.slice(3, 6), words.slice(6)].map((w) => w.join(' '));
    const event = (text: string, i: number): string => `data: ${JSON.stringify({ id: 'trsc-1', object: 'transcription.chunk', model: fields.model, choices: [{ delta: { content: text }, finish_reason: i === 2 ? 'stop' : null }] })}\n\n`;
    if (fields.model === 'whisper-events') {
      // OpenAI's shape: deltas, then the done event with the usage, and no [DONE].
      for (const delta of thirds) res.write(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta })}\n\n`);
      res.end(`data: ${JSON.stringify({ type: 'transcript.text.done', text: TRANSCRIPT, usage: { type: 'duration', seconds: FIXED_SECONDS } })}\n\n`);
      return;
    }
    res.write(event(thirds[0], 0));
    const rest = (): void => {
      if (res.writableEnded) return;
      thirds.slice(1).forEach((text, i) => res.write(event(text, i + 1)));
      res.write(`data: ${JSON.stringify({ id: 'trsc-1', object: 'transcription.chunk', model: fields.model, choices: [], usage: { prompt_tokens: 7, completion_tokens: 9, total_tokens: 16 } })}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    if (fields.model === 'whisper-held') hold(rest);
    else rest();
    return;
  }
  if (format === 'json') return json(res, { text: TRANSCRIPT, usage: { type: 'duration', seconds } });
  if (format === 'verbose_json') return json(res, { task: 'transcribe', language: 'english', duration: seconds, text: TRANSCRIPT, segments: [] });
  const text = format === 'text' ? `${TRANSCRIPT}\n` : format === 'srt' ? `1\n00:00:00,000 --> 00:00:01,000\n${TRANSCRIPT}\n` : `WEBVTT\n\n00:00.000 --> 00:01.000\n${TRANSCRIPT}\n`;
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}

function json(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startAudioBackend(): Promise<AudioBackend> {
  const requests: AudioRecord[] = [];
  let held: Array<() => void> = [];
  const state = { spoken: 0 };
  const handle = async (req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> => {
    const path = req.url ?? '';
    const contentType = String(req.headers['content-type'] ?? '');
    if (path === '/v1/audio/speech') {
      const fields = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      requests.push({ path, contentType, fields });
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.write(SPEECH_HEAD);
      const finish = (): void => { if (!res.writableEnded) { res.end(SPEECH_TAIL); state.spoken++; } };
      if (fields.voice !== 'held') return finish();
      held.push(finish);
      setTimeout(finish, 10_000).unref();
      return;
    }
    const form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
    const fields: Record<string, string> = {};
    let file: AudioRecord['file'];
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') fields[name] = value;
      else file = { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
    }
    const seconds = fields.model === 'whisper-fixed' ? FIXED_SECONDS : (file!.bytes.length - 44) / (RATE * 2);
    requests.push({ path, contentType, fields, file, seconds });
    uploadAnswer(res, fields, seconds, (rest) => {
      held.push(rest);
      setTimeout(rest, 10_000).unref();
    });
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void handle(req, res, Buffer.concat(chunks)).catch(() => { res.writeHead(500); res.end(); }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}/v1`,
    requests,
    release: () => { const now = held; held = []; for (const f of now) f(); },
    get spoken() { return state.spoken; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
