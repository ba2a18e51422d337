// Reads a whole request body and leaves it in the request stream: the bytes
// are put back (readable.unshift) before the stream can end, so the proxy
// later pipes the request as if nobody had read it, byte for byte.
//
//   peekBody(req, limit, (err, bytes) => { ...check bytes...; proxy(req, res) })
//
// Why not read it and write it again (http-proxy-middleware's fixRequestBody)?
// That writes in the proxyReq event, which fires when the upstream request
// gets a socket; with a bounded keep-alive agent a request waiting for a
// socket has been ended by then, and the write fails. It also re-serialises
// the JSON, so the backend would not get the client's bytes.
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../../contract/errors';
import { tooLarge } from '../json-body';

export function peekBody(req: IncomingMessage, limit: number, done: (err: GatewayError | undefined, bytes?: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const stop = (): void => {
    req.removeListener('readable', onReadable);
    req.removeListener('end', onEnd);
    req.removeListener('error', onError);
  };
  const onReadable = (): void => {
    let chunk: Buffer | null;
    while ((chunk = req.read() as Buffer | null) !== null) {
      size += chunk.length;
      if (size > limit) {
        stop();
        req.resume(); // drain the rest; the connection closes after the 413
        return done(tooLarge(limit));
      }
      chunks.push(chunk);
    }
    // `complete`: the parser has seen the end of the body. The end event comes on a later
    // tick and only while nothing is buffered, so putting the bytes back now keeps it away.
    if (!req.complete) return;
    stop();
    const bytes = Buffer.concat(chunks, size);
    if (size > 0) req.unshift(bytes);
    done(undefined, bytes);
  };
  // An empty body that had ended before anyone listened ends without a readable event.
  const onEnd = (): void => {
    stop();
    done(undefined, Buffer.concat(chunks, size));
  };
  const onError = (): void => {
    stop();
    done(new GatewayError('client_closed', 'The client closed the connection while sending the body.'));
  };
  req.on('readable', onReadable);
  req.once('end', onEnd);
  req.once('error', onError);
}
