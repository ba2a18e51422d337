// The error middleware: the one place that writes an error body. Anything that
// is not a GatewayError becomes internal_error with a generic message and a
// log line carrying the request id; a stack trace never reaches a client.
import type { NextFunction, Request, Response } from 'express';
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { sendJson } from '../plumbing/send-json';
import { errorBody, GatewayError, isGatewayError } from '../contract/errors';
import { contextOf, requestIdOf } from '../pipeline/context';
import { runHeadHooks } from '../pipeline/runner';
import type { ApiRequest } from './handlers';
import type { ClientProtocol } from '../contract/types';
import { messagesErrorBody, messagesErrorStatus } from '../protocols/messages/errors';

export function toGatewayError(err: unknown): GatewayError {
  if (isGatewayError(err)) return err;
  return new GatewayError('internal_error', 'The gateway failed to handle this request. Try again; if it keeps failing, tell the gateway operator and quote the x-request-id header.');
}

/** The error response in the client's protocol: the interface's error object, or Anthropic's on the Messages API. */
export function sendError(res: ServerResponse, error: GatewayError, protocol: ClientProtocol = 'chat', requestId?: string): void {
  const headers: Record<string, string> = { ...error.headers };
  // A refusal that says more (an MCP resource's metadata, RFC 9728) brings its own challenge.
  if (error.status === 401) headers['www-authenticate'] ??= 'Bearer';
  if (protocol !== 'messages') return sendJson(res, error.status, errorBody(error), headers);
  const status = messagesErrorStatus(error.status, error.reason);
  sendJson(res, status, messagesErrorBody(error.status, error.reason, error.message, { requestId, param: error.param ?? undefined }), headers);
}

/** The protocol of a request that never got a context (a 404 or 405 under /v1/messages): its path says, so Anthropic's clients read their own error shape. */
const MESSAGES_PATH = /^\/v1\/messages(?:[/?]|$)/;
const protocolOfPath = (url: string | undefined): ClientProtocol => (MESSAGES_PATH.test(url ?? '') ? 'messages' : 'chat');

export function errorMiddleware(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const error = toGatewayError(err);
    const ctx = contextOf(req);
    const requestId = ctx?.id ?? (res.headersSent ? undefined : requestIdOf(req, res));
    if (error.reason === 'internal_error') {
      logger.error({ requestId, err: (err as Error)?.message, stack: (err as Error)?.stack }, 'unhandled error');
    }
    ctx?.failWith(error);
    if (error.reason === 'client_closed' || ctx?.closed) return;
    if (res.headersSent) return void res.destroy();
    if (ctx) runHeadHooks((req as ApiRequest).runtime.pipeline, ctx, { status: error.status, stream: false }, logger);
    const protocol = ctx?.protocol ?? protocolOfPath(req.url);
    if (ctx === undefined && protocol === 'messages') res.setHeader('request-id', requestId!);
    sendError(res, error, protocol, requestId);
  };
}

/** What a router calls when a request falls through it: reached only if the error middleware itself failed; never leaves a request hanging. */
export const lastResort = (logger: Logger, res: ServerResponse) => (err?: unknown): void => {
  logger.error({ err: (err as Error)?.message }, 'request fell through the router');
  if (!res.headersSent) sendError(res, toGatewayError(undefined)); else res.destroy();
};
