// POST /v{1,2}/audio/transcriptions and /audio/translations (a multipart
// upload, read once and bounded: endpointLimits) and /audio/speech (JSON):
// the body made into the request view (ctx.audio; ctx.texts: the prompt, or
// speech's input and instructions), then routed and forwarded as chat is:
// the key's allow-list, the request hooks (content filter, PII, budgets), the
// route's fallbacks, one usage record (docs/endpoints.md#audio).
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../contract/errors';
import { UploadExchange, SPEECH_EXCHANGE } from '../proxy/exchanges/audio';
import { boundaryOf } from '../request/multipart';
import { parseSpeech, parseUpload } from './audio-requests';
import { routeAndForward, type ApiRequest } from './handlers';
import { readUpload } from './upload-body';

/** The Express handler of transcriptions or translations: reads its own body (multipart, not JSON). */
export function uploadEndpoint(endpoint: 'transcriptions' | 'translations') {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const r = req as ApiRequest;
    const { sluice: ctx, runtime } = r;
    const type = req.headers['content-type'];
    const boundary = boundaryOf(type);
    if (boundary === undefined) {
      throw new GatewayError('unsupported_media_type', 'Send the audio as multipart/form-data (Content-Type: multipart/form-data; boundary=...), with a file part and a model field.');
    }
    const body = await readUpload(req, res, runtime.endpointLimits[endpoint].maxBytes);
    if (ctx.closed) return;
    const upload = parseUpload(endpoint, body, boundary, runtime.endpointLimits);
    ctx.audio = upload.view;
    ctx.texts = upload.view.texts;
    ctx.model = upload.view.model;
    ctx.stream = upload.stream;
    const route = runtime.routes.resolve(upload.view.model, endpoint, ctx.version);
    const sent = { parts: upload.parts, fileBytes: upload.file.data.length, sent: upload.sent, responseFormat: upload.responseFormat };
    await routeAndForward(r, res, next, endpoint, route, new UploadExchange(sent, body, boundary, type!));
  };
}

/** The Express handler of speech (its JSON body already read). */
export async function speech(req: Request, res: Response, next: NextFunction): Promise<void> {
  const r = req as ApiRequest;
  const { sluice: ctx, runtime } = r;
  const audio = parseSpeech(req.body, runtime.endpointLimits);
  ctx.audio = audio;
  ctx.texts = audio.texts;
  ctx.model = audio.model;
  await routeAndForward(r, res, next, 'speech', runtime.routes.resolve(audio.model, 'speech', ctx.version), SPEECH_EXCHANGE);
}
