// The audio endpoints' exchanges (docs/endpoints.md#audio), to a backend in
// OpenAI's format at the endpoint's own path. An upload (transcriptions,
// translations) goes as the client's multipart bytes, or written again when
// the route renames the model or a rewrite changed its prompt; the answer is
// JSON (json, verbose_json) or text (text, srt, vtt) relayed as written, or an
// event stream relayed event by event (vLLM's chunks and [DONE], or OpenAI's
// transcript.text.delta and .done). Speech goes as JSON and its audio comes
// back as bytes, relayed as they arrive. Each returns the usage it saw.
//
//   routeAndForward(req, res, next, 'transcriptions', route, new UploadExchange(upload, body, boundary, type));
import type { Usage } from '../../contract/plugin';
import type { Context } from '../../pipeline/context';
import { readAudioUsage, speechUsage } from '../../request/audio-usage';
import { encodeMultipart, type Part } from '../../request/multipart';
import type { Exchange } from '../exchange';
import { isRecord, parseBackendJson, readEvent } from '../exchange';
import type { Emit, Format, JsonAnswer, StreamTransformer } from '../formats/format';
import { openaiFormat } from '../formats/openai';
import { badAnswer } from '../status';
import type { Upstream } from '../upstream';

/** What an upload exchange sends: the parsed form, the client's bytes and their content type. */
export interface SentUpload {
  parts: readonly Part[];
  fileBytes: number;
  /** The text fields as the client sent them. */
  sent: Readonly<Record<string, string>>;
  responseFormat: string;
}

abstract class AudioExchange implements Exchange, Format {
  readonly protocol = 'chat';

  /** Only a backend in OpenAI's format serves these paths (the config refuses a route that says otherwise). */
  serves(upstream: Upstream): boolean {
    return upstream.format === openaiFormat;
  }

  formatFor(): Format {
    return this;
  }

  abstract requestBody(ctx: Context, upstreamModel: string): string;
  abstract respondJson(ctx: Context, text: string, upstream: string): JsonAnswer;
  abstract streamTransformer(ctx: Context, upstream: string): StreamTransformer;
}

/** A transcription or translation: one per request, since it holds the upload. */
export class UploadExchange extends AudioExchange {
  constructor(private readonly upload: SentUpload, private readonly original: Buffer, private readonly boundary: string, readonly contentType: string) {
    super();
  }

  requestBody(): string {
    throw new Error('an upload is sent as bytes');
  }

  /** The client's bytes when nothing changed; else the form written again with the model and text fields as they stand. */
  requestBytes(ctx: Context, upstreamModel: string): Buffer {
    const { fields, model } = ctx.audio!;
    const { sent, parts } = this.upload;
    if (upstreamModel === model && Object.keys(sent).every((k) => fields[k] === sent[k])) return this.original;
    return encodeMultipart(parts.map((p) => {
      if (p.name === 'model') return { ...p, data: Buffer.from(upstreamModel, 'utf8') };
      const text = p.filename === undefined ? fields[p.name] : undefined;
      return text === undefined ? p : { ...p, data: Buffer.from(text, 'utf8') };
    }), this.boundary);
  }

  private usageOf(ctx: Context, raw: unknown, duration?: unknown): Usage {
    return readAudioUsage(raw, duration, ctx.audio!, this.upload.fileBytes);
  }

  respondJson(ctx: Context, text: string, upstream: string): JsonAnswer {
    const format = this.upload.responseFormat;
    if (format !== 'json' && format !== 'verbose_json') return { body: text, usage: this.usageOf(ctx, undefined), contentType: 'text/plain; charset=utf-8' };
    const body = parseBackendJson(text, upstream);
    if (!isRecord(body) || typeof body.text !== 'string') throw badAnswer(upstream, 'no text');
    return { body: text, usage: this.usageOf(ctx, body.usage, body.duration) };
  }

  streamTransformer(ctx: Context, upstream: string): StreamTransformer {
    return new TranscriptStream(ctx, upstream, (raw) => this.usageOf(ctx, raw));
  }
}

/**
 * A transcription's event stream, relayed as the backend writes it: vLLM's
 * chunks (choices[].delta.content) ending with [DONE], or OpenAI's
 * transcript.text.delta events ending with transcript.text.done. The usage is
 * the last the backend reported, else the file's.
 */
class TranscriptStream implements StreamTransformer {
  done = false;
  usage?: Usage;
  /** A finish reason or the done event came: a close without [DONE] after it is a whole answer. */
  private finished = false;
  private raw: unknown;

  constructor(private readonly ctx: Context, private readonly upstream: string, private readonly usageOf: (raw: unknown) => Usage) {}

  push(data: string, emit: Emit): void {
    if (data === '[DONE]') return this.end(emit, true);
    const event = readEvent(data, this.upstream);
    if (!isRecord(event)) {
      this.ctx.forwarding.skippedEvents++;
      return;
    }
    if (event.error !== undefined || event.type === 'error') throw badAnswer(this.upstream, 'the backend reported an error mid-stream', true);
    if (isRecord(event.usage)) this.raw = event.usage;
    const choice = Array.isArray(event.choices) && isRecord(event.choices[0]) ? event.choices[0] : undefined;
    if (typeof choice?.finish_reason === 'string' || event.type === 'transcript.text.done') this.finished = true;
    const renamed = this.ctx.route?.upstreamModel;
    emit(renamed !== undefined && event.model === renamed ? JSON.stringify({ ...event, model: this.ctx.model }) : data);
    if (event.type === 'transcript.text.done') this.end(emit, false);
  }

  private end(emit: Emit, withDone: boolean): void {
    this.done = true;
    this.usage = this.usageOf(this.raw);
    if (withDone) emit('[DONE]');
  }

  finishIfComplete(emit: Emit): boolean {
    if (!this.finished) return false;
    this.end(emit, true);
    return true;
  }
}

/** Speech: the view's JSON body with its text fields as they stand; the audio relayed as bytes. */
class SpeechExchange extends AudioExchange {
  readonly accept = '*/*';

  requestBody(ctx: Context, upstreamModel: string): string {
    const audio = ctx.audio!;
    return JSON.stringify({ ...audio.body, ...audio.fields, model: upstreamModel });
  }

  bytesUsage(ctx: Context): Usage {
    return speechUsage(ctx.audio!);
  }

  respondJson(_ctx: Context, _text: string, upstream: string): JsonAnswer {
    throw badAnswer(upstream, 'JSON to speech');
  }

  streamTransformer(_ctx: Context, upstream: string): StreamTransformer {
    throw badAnswer(upstream, 'an event stream to speech');
  }
}

export const SPEECH_EXCHANGE: Exchange = new SpeechExchange();
