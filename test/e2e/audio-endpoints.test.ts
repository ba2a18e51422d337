// The audio endpoints first-class (docs/endpoints.md#audio) through the
// official openai SDK unchanged: a transcription of a WAV file the test
// writes (json, text, verbose_json, and streamed), a translation, speech whose
// first bytes reach the client while the backend is still speaking; each
// under the key's allow-list, the content filter on its text, the endpoint's
// limits, and one usage record whose seconds or characters and cost are the
// price table's applied to what the backend reported.
import OpenAI, { toFile } from 'openai';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { makeAdminKey } from '../support/admin';
import { FIXED_SECONDS, SPEECH_HEAD, SPEECH_TAIL, sineWav, startAudioBackend, TRANSCRIPT, type AudioBackend } from '../support/audio-backend';
import { bearer, call, post } from '../support/http';
import { expectError } from '../support/errors';
import { exported } from '../support/spend';
import { until } from '../support/wait';
import { parseExposition, scrape, series } from '../support/metrics';

// $0.006 a minute of audio (OpenAI's whisper-1), $15 per million characters (tts-1).
const PRICING = [{ model: 'whisper*', audioMinute: 0.006 }, { model: 'tts', characters: 15 }];
const WAV = sineWav(400);

/** A multipart body as a client writes it, with any fields and a file (null: none). */
function form(fields: Record<string, string>, file: Buffer | null = WAV, boundary = 'test-boundary-1234'): { body: Buffer; type: string } {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  if (file !== null) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="tone.wav"\r\nContent-Type: audio/wav\r\n\r\n`), file, Buffer.from('\r\n'));
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

describe('audio: transcriptions, translations and speech', () => {
  const adminKey = makeAdminKey();
  const alice = makeKey('alice');
  const chatOnly = makeKey('chat-only', { models: ['chat-*'] });
  let backend: AudioBackend;
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    backend = await startAudioBackend();
    gw = await startGateway({
      admin: { keys: [adminKey.digest] },
      keys: [alice.entry, chatOnly.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [
        { model: 'whisper', upstream: 'b', endpoints: ['transcriptions', 'translations'] },
        { model: 'whisper-fixed', upstream: 'b', endpoints: ['transcriptions'] },
        { model: 'whisper-held', upstream: 'b', endpoints: ['transcriptions'] },
        { model: 'whisper-events', upstream: 'b', endpoints: ['transcriptions'] },
        { model: 'whisper-renamed', upstream: 'b', endpoints: ['transcriptions'], upstreamModel: 'openai/whisper-large-v3' },
        { model: 'tts', upstream: 'b', endpoints: ['speech'] },
        { model: 'chat-1', upstream: 'b' },
      ],
      endpointLimits: { transcriptions: { maxBytes: '64kb', maxChars: 100 }, speech: { maxChars: 200 } },
      pricing: PRICING,
      plugins: [{ name: 'pii', input: 'redact', kinds: ['email'] }, { name: 'content-filter', terms: ['forbidden phrase'] }, { name: 'metrics' }],
    }, { admin: true, metrics: {} });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: alice.key, maxRetries: 0, timeout: 10_000 });
  });
  afterAll(async () => { backend?.release(); await gw?.close(); await backend?.close(); });

  const wavFile = () => toFile(WAV, 'tone.wav', { type: 'audio/wav' });
  const reached = (): number => backend.requests.length;
  const upload = (path: string, fields: Record<string, string>, file: Buffer | null = WAV, key = alice.key) => {
    const { body, type } = form(fields, file);
    return call('POST', `${gw.url}${path}`, body, { ...bearer(key), 'content-type': type });
  };

  it('transcribes a WAV file through the openai SDK: json, text and verbose_json; the file reaches the backend unchanged', async () => {
    const asJson = await client.audio.transcriptions.create({ file: await wavFile(), model: 'whisper', response_format: 'json', language: 'en', temperature: 0.2 });
    expect(asJson.text).toBe(TRANSCRIPT);
    const sent = backend.requests.at(-1)!;
    expect(sent.file!.bytes.equals(WAV)).toBe(true);
    expect(sent.file!.name).toBe('tone.wav');
    expect(sent.fields).toMatchObject({ model: 'whisper', response_format: 'json', language: 'en', temperature: '0.2' });
    const asText = await client.audio.transcriptions.create({ file: await wavFile(), model: 'whisper', response_format: 'text' });
    expect(asText).toBe(`${TRANSCRIPT}\n`);
    const verbose = await client.audio.transcriptions.create({ file: await wavFile(), model: 'whisper', response_format: 'verbose_json' });
    expect(verbose.duration).toBeCloseTo(0.4, 5);
    expect(verbose.text).toBe(TRANSCRIPT);
    const vtt = await upload('/v2/audio/transcriptions', { model: 'whisper', response_format: 'vtt' });
    expect(vtt.status).toBe(200);
    expect(vtt.headers['content-type']).toMatch(/^text\/plain/);
  });

  it('translates through the openai SDK', async () => {
    const res = await client.audio.translations.create({ file: await wavFile(), model: 'whisper' });
    expect(res.text).toBe(TRANSCRIPT);
    expect(backend.requests.at(-1)!.path).toBe('/v1/audio/translations');
  });

  it('streams a transcription event by event as the backend sends it: vLLM\'s chunks and [DONE], or OpenAI\'s events; each recorded with its usage', async () => {
    const stream = await client.audio.transcriptions.create({ file: await wavFile(), model: 'whisper', stream: true }, { headers: { 'x-request-id': 'au-stream-vllm' } });
    const texts: string[] = [];
    for await (const event of stream) {
      const chunk = event as unknown as { choices: Array<{ delta: { content?: string } }> };
      for (const c of chunk.choices ?? []) if (c.delta.content) texts.push(c.delta.content);
    }
    expect(texts.join(' ')).toBe(TRANSCRIPT);
    const events = await client.audio.transcriptions.create({ file: await wavFile(), model: 'whisper-events', stream: true }, { headers: { 'x-request-id': 'au-stream-openai' } });
    const kinds: string[] = [];
    for await (const event of events) kinds.push(event.type);
    expect(kinds).toEqual(['transcript.text.delta', 'transcript.text.delta', 'transcript.text.delta', 'transcript.text.done']);
    const find = async () => (await exported(gw.admin!.url, adminKey.key, 'jsonl')).filter((r) => String(r.request_id).startsWith('au-stream-'));
    await until(async () => (await find()).length === 2, 'the two streams\' usage records');
    const byId = new Map((await find()).map((r) => [r.request_id, r]));
    // vLLM's stream: its tokens, and the WAV's 0.4 s; OpenAI's: its seconds.
    expect(byId.get('au-stream-vllm')).toMatchObject({ status: 200, prompt_tokens: 7, completion_tokens: 9, audio_seconds: 0.4, estimated: false });
    expect(byId.get('au-stream-openai')).toMatchObject({ status: 200, audio_seconds: FIXED_SECONDS, estimated: false });
    expect(Math.round((byId.get('au-stream-openai')!.cost as number) * 1e9)).toBe(Math.round((FIXED_SECONDS * 0.006 / 60) * 1e9));
  });

  it('relays a transcription stream as it arrives: the first event reaches the client while the backend holds the rest', async () => {
    const stream = await client.audio.transcriptions.create({ file: await wavFile(), model: 'whisper-held', stream: true });
    const texts: string[] = [];
    let released = false;
    for await (const event of stream) {
      const chunk = event as unknown as { choices: Array<{ delta: { content?: string } }> };
      for (const c of chunk.choices ?? []) if (c.delta.content) texts.push(c.delta.content);
      if (!released) {
        // Only the first delta exists yet: the backend sends the rest when released.
        expect(texts).toEqual(['a tone at']);
        released = true;
        backend.release();
      }
    }
    expect(texts.join(' ')).toBe(TRANSCRIPT);
  });

  it('renames the model for the backend: the upload is written again with the file unchanged', async () => {
    const res = await client.audio.transcriptions.create({ file: await wavFile(), model: 'whisper-renamed', prompt: 'mail me at bob@example.com' });
    expect(res.text).toBe(TRANSCRIPT);
    const sent = backend.requests.at(-1)!;
    expect(sent.fields.model).toBe('openai/whisper-large-v3');
    expect(sent.fields.prompt).not.toContain('bob@example.com'); // PII redacted in the prompt
    expect(sent.file!.bytes.equals(WAV)).toBe(true);
  });

  it('speech: the first bytes reach the client while the backend is still speaking, the rest as it sends them', async () => {
    const before = backend.spoken;
    const res = await client.audio.speech.create({ model: 'tts', voice: 'held', input: 'Hello there, a test of speech.', response_format: 'mp3' });
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const reader = res.body!.getReader();
    const first = await reader.read();
    // The backend holds the rest until released: bytes arrived before it finished.
    expect(backend.spoken).toBe(before);
    expect(Buffer.from(first.value!).subarray(0, SPEECH_HEAD.length).equals(SPEECH_HEAD)).toBe(true);
    backend.release();
    const rest: Buffer[] = [Buffer.from(first.value!)];
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest.push(Buffer.from(r.value));
    expect(Buffer.concat(rest).equals(Buffer.concat([SPEECH_HEAD, SPEECH_TAIL]))).toBe(true);
    expect(backend.requests.at(-1)!.fields).toEqual({ model: 'tts', voice: 'held', input: 'Hello there, a test of speech.', response_format: 'mp3' });
  });

  it('refuses a blocked term in a transcription prompt and in speech input, before any backend sees it', async () => {
    const before = reached();
    await expect(client.audio.transcriptions.create({ file: await wavFile(), model: 'whisper', prompt: 'say the Forbidden Phrase' })).rejects.toMatchObject({ status: 400, code: 'content_filter' });
    await expect(client.audio.speech.create({ model: 'tts', voice: 'alloy', input: 'a forbidden phrase spoken' })).rejects.toMatchObject({ status: 400, code: 'content_filter' });
    await expect(client.audio.translations.create({ file: await wavFile(), model: 'whisper', prompt: 'forbidden phrase' })).rejects.toMatchObject({ status: 400 });
    // In speech's instructions, escaped in the JSON, accented; and a prompt sent twice, or under another case, cannot slip past.
    const speech = (raw: string) => call('POST', `${gw.url}/v1/audio/speech`, raw, { ...bearer(alice.key), 'content-type': 'application/json' });
    expectError(await speech('{"model":"tts","voice":"alloy","input":"hi","instructions":"read the forbidden phrase"}'), 400, 'content_filter');
    expectError(await speech('{"model":"tts","voice":"alloy","input":"\\u0066orbidden phrase"}'), 400, 'content_filter');
    expectError(await speech('{"model":"tts","voice":"alloy","input":"forbídden phrase"}'), 400, 'content_filter');
    const twice = Buffer.concat([form({ model: 'whisper', prompt: 'harmless' }).body.subarray(0, -`--test-boundary-1234--\r\n`.length), Buffer.from('--test-boundary-1234\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nforbidden phrase\r\n--test-boundary-1234--\r\n')]);
    expectError(await call('POST', `${gw.url}/v1/audio/transcriptions`, twice, { ...bearer(alice.key), 'content-type': 'multipart/form-data; boundary=test-boundary-1234' }), 400, 'invalid_request', 'prompt');
    expectError(await upload('/v1/audio/transcriptions', { model: 'whisper', Prompt: 'forbidden phrase' }), 400, 'invalid_request', 'Prompt');
    expect(reached()).toBe(before);
  });

  it('a key without the model gets 403 on each endpoint', async () => {
    const before = reached();
    expectError(await upload('/v1/audio/transcriptions', { model: 'whisper' }, WAV, chatOnly.key), 403, 'model_not_allowed');
    expectError(await upload('/v1/audio/translations', { model: 'whisper' }, WAV, chatOnly.key), 403, 'model_not_allowed');
    expectError(await post(`${gw.url}/v1/audio/speech`, { model: 'tts', voice: 'alloy', input: 'hi' }, bearer(chatOnly.key)), 403, 'model_not_allowed');
    expect(reached()).toBe(before);
  });

  it('bad input is a 400 naming the field: strings where numbers go, unknown fields, a missing file, too much text', async () => {
    const before = reached();
    expectError(await upload('/v1/audio/transcriptions', { model: 'whisper', temperature: 'warm' }), 400, 'invalid_request', 'temperature');
    expectError(await upload('/v1/audio/transcriptions', { model: 'whisper', temperature: '7' }), 400, 'invalid_request', 'temperature');
    expectError(await upload('/v1/audio/transcriptions', { model: 'whisper', response_format: 'mp3' }), 400, 'invalid_request', 'response_format');
    expectError(await upload('/v1/audio/transcriptions', { model: 'whisper', stream: 'yes' }), 400, 'invalid_request', 'stream');
    expectError(await upload('/v1/audio/transcriptions', { model: 'whisper', messages: 'hidden text' }), 400, 'invalid_request', 'messages');
    expectError(await upload('/v1/audio/transcriptions', { model: 'whisper' }, null), 400, 'invalid_request', 'file');
    expectError(await upload('/v1/audio/transcriptions', { file: 'not a file', model: 'whisper' }, null), 400, 'invalid_request', 'file');
    expectError(await upload('/v1/audio/transcriptions', { model: 'whisper', prompt: 'x'.repeat(101) }), 400, 'invalid_request', 'prompt');
    expectError(await upload('/v1/audio/transcriptions', { response_format: 'json' }), 400, 'invalid_request', 'model');
    const broken = await call('POST', `${gw.url}/v1/audio/transcriptions`, Buffer.from('--b\r\nno headers end'), { ...bearer(alice.key), 'content-type': 'multipart/form-data; boundary=b' });
    expectError(broken, 400, 'invalid_request');
    expectError(await post(`${gw.url}/v1/audio/transcriptions`, { model: 'whisper' }, bearer(alice.key)), 415, 'unsupported_media_type');
    const speech = (body: Record<string, unknown>) => post(`${gw.url}/v1/audio/speech`, { model: 'tts', voice: 'alloy', input: 'hi', ...body }, bearer(alice.key));
    expectError(await speech({ speed: '1.5' }), 400, 'invalid_request', 'speed');
    expectError(await speech({ speed: 9 }), 400, 'invalid_request', 'speed');
    expectError(await speech({ input: 'y'.repeat(201) }), 400, 'invalid_request', 'input');
    expectError(await speech({ input: 42 }), 400, 'invalid_request', 'input');
    expectError(await speech({ response_format: 'mp4' }), 400, 'invalid_request', 'response_format');
    expectError(await speech({ stream_format: 'sse' }), 400, 'invalid_request', 'stream_format');
    expectError(await speech({ extra: 'text' }), 400, 'invalid_request', 'extra');
    expect(reached()).toBe(before);
  });

  it('oversized audio: 413 naming the file, declared or not, answered before the body has all been sent', async () => {
    const big = sineWav(3000); // 96 kB, past the 64 kB limit
    expectError(await upload('/v1/audio/transcriptions', { model: 'whisper' }, big), 413, 'payload_too_large', 'file');
    // Chunked, with no length: the gateway answers while the client is still sending, and reads no further.
    const { request } = await import('node:http');
    const url = new URL(`${gw.url}/v1/audio/transcriptions`);
    const head = form({ model: 'whisper' }, Buffer.alloc(0)).body.subarray(0, 200);
    const result = await new Promise<{ status: number; sentKb: number; body: string }>((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...bearer(alice.key), 'content-type': 'multipart/form-data; boundary=test-boundary-1234', 'transfer-encoding': 'chunked' } }, (res) => {
        answered = true;
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode!, sentKb: sent / 1024, body }));
      });
      req.on('error', (err) => { if (!answered) reject(err); });
      req.write(head);
      const chunk = Buffer.alloc(16 * 1024, 1);
      // At most 64 MB, one chunk at a time as the socket takes it: the answer must come long before.
      const pump = (): void => {
        while (!answered && sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error.param).toBe('file');
    expect(result.sentKb).toBeLessThan(32 * 1024);
  });

  it('lists each model with the audio endpoints it serves; a model not served on an endpoint is a 404 naming it', async () => {
    const models = await call('GET', `${gw.url}/v1/models`, undefined, bearer(alice.key));
    const byId = new Map((models.body.data as Array<{ id: string; endpoints: string[] }>).map((m) => [m.id, m.endpoints]));
    expect(byId.get('whisper')).toEqual(['transcriptions', 'translations']);
    expect(byId.get('tts')).toEqual(['speech']);
    const res = await upload('/v1/audio/translations', { model: 'tts' });
    expectError(res, 404, 'model_not_found', 'model');
    expect(res.body.error.message).toMatch(/translations/);
  });

  it('answers another method with 405 and Allow: POST', async () => {
    for (const path of ['/v1/audio/transcriptions', '/v2/audio/translations', '/v1/audio/speech']) {
      const res = await call('GET', `${gw.url}${path}`, undefined, bearer(alice.key));
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('POST');
    }
  });

  it('records each request with its endpoint, its seconds or characters, and the price table\'s cost', async () => {
    const ids = { reported: 'au-reported', wav: 'au-wav', speech: 'au-speech', translated: 'au-translated' };
    const headers = (id: string) => ({ ...bearer(alice.key), 'x-request-id': id });
    const reported = form({ model: 'whisper-fixed', response_format: 'json' });
    const r1 = await call('POST', `${gw.url}/v1/audio/transcriptions`, reported.body, { ...headers(ids.reported), 'content-type': reported.type });
    expect(r1.status).toBe(200);
    // The backend's 12.5 seconds at $0.006 a minute.
    expect(r1.headers['x-sluice-cost']).toBe('0.00125');
    const asText = form({ model: 'whisper', response_format: 'text' });
    expect((await call('POST', `${gw.url}/v1/audio/transcriptions`, asText.body, { ...headers(ids.wav), 'content-type': asText.type })).status).toBe(200);
    const translated = form({ model: 'whisper', response_format: 'verbose_json' });
    expect((await call('POST', `${gw.url}/v1/audio/translations`, translated.body, { ...headers(ids.translated), 'content-type': translated.type })).status).toBe(200);
    const spoken = await post(`${gw.url}/v1/audio/speech`, { model: 'tts', voice: 'alloy', input: 'twenty characters ok' }, headers(ids.speech));
    expect(spoken.status).toBe(200);
    const find = async () => (await exported(gw.admin!.url, adminKey.key, 'jsonl')).filter((r) => Object.values(ids).includes(r.request_id as string));
    await until(async () => (await find()).length === 4, 'the four usage records');
    const byId = new Map((await find()).map((r) => [r.request_id, r]));
    const expected = [
      { id: ids.reported, endpoint: 'transcriptions', model: 'whisper-fixed', audio_seconds: FIXED_SECONDS, nanos: Math.round((FIXED_SECONDS * 0.006 / 60) * 1e9) },
      // Text answers say no duration: the WAV header's 0.4 s, not estimated.
      { id: ids.wav, endpoint: 'transcriptions', model: 'whisper', audio_seconds: 0.4, nanos: Math.round((0.4 * 0.006 / 60) * 1e9) },
      { id: ids.translated, endpoint: 'translations', model: 'whisper', audio_seconds: 0.4, nanos: Math.round((0.4 * 0.006 / 60) * 1e9) },
    ];
    for (const e of expected) {
      expect(byId.get(e.id)).toMatchObject({ endpoint: e.endpoint, model: e.model, status: 200, audio_seconds: e.audio_seconds, estimated: false });
      expect(Math.round((byId.get(e.id)!.cost as number) * 1e9)).toBe(e.nanos);
    }
    // 20 characters at $15 per million.
    expect(byId.get(ids.speech)).toMatchObject({ endpoint: 'speech', model: 'tts', status: 200, characters: 20, estimated: false });
    expect(Math.round((byId.get(ids.speech)!.cost as number) * 1e9)).toBe(20 * 15_000);
    const csv = await exported(gw.admin!.url, adminKey.key, 'csv');
    expect(csv.find((r) => r.request_id === ids.speech)).toMatchObject({ characters: 20 });
    expect(csv.find((r) => r.request_id === ids.reported)).toMatchObject({ endpoint: 'transcriptions', audio_seconds: FIXED_SECONDS });
    // The metrics count each by endpoint and model; the content filter's refusals by endpoint.
    const samples = parseExposition((await scrape(gw.metrics!.url)).text);
    const requests = series(samples, 'sluice_requests_total');
    for (const [endpoint, model] of [['transcriptions', 'whisper-fixed'], ['translations', 'whisper'], ['speech', 'tts']]) {
      expect(requests[`endpoint=${endpoint},model=${model},protocol=chat,reason=,status=200,version=v1`]).toBeGreaterThanOrEqual(1);
    }
    const blocks = series(samples, 'sluice_content_filter_blocks_total');
    expect(blocks['endpoint=transcriptions']).toBeGreaterThanOrEqual(1);
    expect(blocks['endpoint=speech']).toBeGreaterThanOrEqual(1);
  });
});
