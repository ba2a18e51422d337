// Reads a request body as JSON, once, at the edge: UTF-8 JSON only, at most
// the configured size and MAX_JSON_DEPTH levels deep, an object, with every
// refusal a GatewayError (415, 413, 400).
// Hand-written because it is the hot path: a body arrives in one or two
// chunks, and a general-purpose parser's per-request setup costs more than
// the parse itself.
import { isUtf8 } from 'node:buffer';
import type { NextFunction, Request, Response } from 'express';
import { GatewayError } from '../contract/errors';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../request/json-depth';

const JSON_TYPE = /^application\/json\s*(?:;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)"?/i;

export const isJsonType = (type: string | undefined): type is string => type !== undefined && JSON_TYPE.test(type);

/** The 415 for a content type or encoding other than UTF-8 JSON, or undefined when it is fine. */
export function mediaTypeProblem(type: string | undefined, encoding: string | undefined): GatewayError | undefined {
  if (!isJsonType(type)) {
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

export const tooLarge = (limit: number) => new GatewayError('payload_too_large', `The request body is larger than the limit of ${limit} bytes. Send a smaller body.`);

const EMPTY = Buffer.alloc(0);

const invalidJson = (message: string) => new GatewayError('invalid_json', message);

/** The body's text, ready for JSON.parse, or why it cannot be parsed. */
function bodyText(bytes: Buffer): string | GatewayError {
  // Decoding would turn bytes in another charset into U+FFFD and forward the mangled text.
  if (!isUtf8(bytes)) return invalidJson('The request body is not valid UTF-8. Send the JSON encoded as UTF-8.');
  const text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) return invalidJson('The request body starts with a byte order mark (U+FEFF). Send the JSON without it.');
  if (text.trim() === '') return invalidJson('The request body is empty. Send a JSON object with Content-Type: application/json.');
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) return invalidJson(`The request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep. Send at most ${MAX_JSON_DEPTH} levels.`);
  return text;
}

const kindOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);

/** A whole body's bytes as the JSON object they hold, or why they are not one (400). */
export function parseJsonBody(bytes: Buffer): Record<string, unknown> | GatewayError {
  const text = bodyText(bytes);
  if (typeof text !== 'string') return text;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return invalidJson('The request body is not valid JSON. Send a JSON object with Content-Type: application/json.');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return new GatewayError('invalid_request', `The request body must be a JSON object, got ${kindOf(body)}.`);
  }
  return body as Record<string, unknown>;
}

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
      const body = parseJsonBody(first === undefined ? EMPTY : chunks === undefined ? first : Buffer.concat(chunks, size));
      if (body instanceof GatewayError) return finish(body);
      req.body = body;
      finish();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.once('error', () => finish(new GatewayError('client_closed', 'The client closed the connection while sending the body.')));
  };
}
