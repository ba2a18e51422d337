// Reads a request body as JSON, once, at the edge: UTF-8 JSON only, at most
// the configured size, with every refusal a GatewayError (415, 413, 400).
// Hand-written because it is the hot path: a body arrives in one or two
// chunks, and a general-purpose parser's per-request setup costs more than
// the parse itself.
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../errors';

const JSON_TYPE = /^application\/json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

/** The 415 for a content type or encoding other than UTF-8 JSON, or undefined when it is fine. */
export function mediaTypeProblem(type: string | undefined, encoding: string | undefined): GatewayError | undefined {
  if (type === undefined || !JSON_TYPE.test(type)) {
    return new GatewayError('unsupported_media_type', 'Send the request body as JSON with the header Content-Type: application/json.');
  }
  const charset = CHARSET.exec(type)?.[1].toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return new GatewayError('unsupported_media_type', `Charset "${charset}" is not supported. Send the body as UTF-8 JSON.`);
  }
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    return new GatewayError('unsupported_media_type', `Content-Encoding "${encoding}" is not supported. Send the body uncompressed.`);
  }
  return undefined;
}

const tooLarge = (limit: number) => new GatewayError('payload_too_large', `The request body is larger than the limit of ${limit} bytes. Send a smaller body.`);

export function jsonBodyReader(limit: number) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const problem = mediaTypeProblem(req.headers['content-type'], req.headers['content-encoding']);
    if (problem) return next(problem);
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      res.setHeader('connection', 'close');
      return next(tooLarge(limit));
    }
    let first: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    let size = 0;
    let done = false;
    const finish = (err?: GatewayError): void => {
      if (done) return;
      done = true;
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      next(err);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        res.setHeader('connection', 'close');
        req.resume();
        return finish(tooLarge(limit));
      }
      if (first === undefined) first = chunk;
      else (chunks ??= [first]).push(chunk);
    };
    const onEnd = (): void => {
      const text = first === undefined ? '' : chunks === undefined ? first.toString('utf8') : Buffer.concat(chunks, size).toString('utf8');
      let body: unknown;
      try {
        body = text.trim() === '' ? {} : JSON.parse(text);
      } catch {
        body = undefined;
      }
      if (body === null || typeof body !== 'object') {
        return finish(new GatewayError('invalid_json', 'The request body is not a JSON object. Send a JSON object with Content-Type: application/json.'));
      }
      req.body = body;
      finish();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.once('error', () => finish(new GatewayError('client_closed', 'The client closed the connection while sending the body.')));
  };
}
