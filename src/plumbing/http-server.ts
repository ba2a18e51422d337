// The public listener's HTTP server. Slow clients are cut: the headers must
// arrive within server.headersTimeoutMs and the whole request (body included)
// within server.requestTimeoutMs, so a client trickling a byte every few
// seconds, or promising a longer body than it sends, holds a connection for
// seconds, not the five minutes Node allows. Where Node's parser refuses a
// request on its own (bad HTTP, headers too large, a timeout), the answer is
// still the interface's error object; a request is either served or refused,
// never both.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody, GatewayError } from '../contract/errors';

export interface ServerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/** How often Node checks the timeouts above: their precision. */
const CHECK_INTERVAL_MS = 1_000;

function refusal(err: NodeJS.ErrnoException): GatewayError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return new GatewayError('request_timeout', 'The request did not arrive in time: send the headers and the whole body promptly.');
    case 'HPE_HEADER_OVERFLOW':
      return new GatewayError('headers_too_large', 'The request headers are too large. Send fewer or shorter headers.');
    default:
      return new GatewayError('invalid_request', 'The request is not valid HTTP/1.1. Check the request line, the headers and the body framing.');
  }
}

/** Answers what Node's parser refused with the error object, when the socket can still take it. */
function onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // Bytes after a request that said Connection: close. That request is already being served,
  // and the connection closes after its answer: the bytes are ignored, never answered with a
  // 400 that would take the place of the answer of a request the backend may already have.
  if (err.code === 'HPE_CLOSED_CONNECTION') return;
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) return void socket.destroy();
  const error = refusal(err);
  const body = errorBody(error);
  socket.end(`HTTP/1.1 ${error.status} ${error.reason.replace(/_/g, ' ')}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

export function createPublicServer(handler: RequestListener, timeouts: ServerTimeouts): Server {
  const server = createServer({
    keepAliveTimeout: 65_000,
    headersTimeout: Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs), // Node refuses a larger one
    requestTimeout: timeouts.requestTimeoutMs,
    connectionsCheckingInterval: CHECK_INTERVAL_MS,
  }, handler);
  server.on('clientError', onClientError);
  return server;
}
