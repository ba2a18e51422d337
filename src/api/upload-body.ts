// Reads an audio upload's multipart body once, at the edge, bounded: a
// declared length past the limit is refused before a byte is read, and a body
// that grows past it while arriving is refused there, the rest drained
// unheld (the connection closes after the 413). The 413 names the file.
//
//   const body = await readUpload(req, res, limits.transcriptions.maxBytes);
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../contract/errors';

const tooLarge = (limit: number): GatewayError =>
  new GatewayError('payload_too_large', `The upload is larger than the limit of ${limit} bytes. Send a shorter or more compressed file.`, { param: 'file' });

export function readUpload(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    res.setHeader('connection', 'close');
    req.resume();
    return Promise.reject(tooLarge(limit));
  }
  if (req.headers['content-encoding'] !== undefined && req.headers['content-encoding'].toLowerCase() !== 'identity') {
    return Promise.reject(new GatewayError('unsupported_media_type', 'Send the upload uncompressed (no Content-Encoding).'));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stop();
      chunks.length = 0;
      res.setHeader('connection', 'close');
      req.resume(); // the rest is read and dropped, never held
      reject(tooLarge(limit));
    };
    const onEnd = (): void => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (): void => {
      stop();
      reject(new GatewayError('client_closed', 'The client closed the connection while sending the body.'));
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  });
}
