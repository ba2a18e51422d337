// The admin API's router: a list of routes, each a method, a path, the name
// of its action and a handler that returns its answer. Every request passes
// the admin-key check first (an unknown path too, so nothing can be probed
// without a key), then the JSON body reader, then its handler; every request
// ends in one audit line, naming the route's action even when the key was
// refused (the check runs once the route is matched). A path served with other methods answers 405 with
// Allow; an unknown one 404. Errors are the gateway's error object, written
// by the one error middleware here.
//
//   const handler = createAdminHandler([
//     route('GET', '/admin/keys/:id', 'keys.show', async (call) => ({ body: await show(call.params.id) })),
//   ], { adminKeys: () => digests, logger });
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { GatewayError } from '../contract/errors';
import { requestIdOf } from '../pipeline/context';
import { errorMiddleware, lastResort } from '../api/errors';
import { jsonBodyReader } from '../api/json-body';
import { drained } from '../plumbing/backpressure';
import { sendJson } from '../plumbing/send-json';
import { adminOf, type AdminKeys } from './auth';
import { auditLine, type Audit } from './audit';

export type AdminMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** One admin request, as its handler sees it. */
export interface AdminCall {
  /** The path's parameters (`:id`), decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** The query string's parameters (the first of each name). */
  readonly query: Readonly<Record<string, string>>;
  /** The JSON object sent, or undefined when the request had no body. */
  readonly body: Record<string, unknown> | undefined;
  /** Who: the admin key, as its digest's first 12 hex digits. */
  readonly admin: string;
  /** The key the action concerns, for the audit line: set it as soon as it is known. */
  keyId?: string;
  /** The team the action concerns, for the audit line. */
  team?: string;
}

/** What a handler answers: a JSON body, 200 unless it says otherwise; or lines of text streamed with 200 (an export). */
export type AdminAnswer = { status?: number; body: unknown } | StreamedAnswer;

export interface StreamedAnswer {
  lines: AsyncIterable<string>;
  contentType: string;
}

export type AdminHandler = (call: AdminCall) => AdminAnswer | Promise<AdminAnswer>;

export interface AdminRoute {
  method: AdminMethod;
  /** Express's path syntax: /admin/keys/:id */
  path: string;
  /** The audit line's `action`, e.g. keys.create. */
  action: string;
  handle: AdminHandler;
}

export const route = (method: AdminMethod, path: string, action: string, handle: AdminHandler): AdminRoute => ({ method, path, action, handle });

/** Largest admin request body. */
export const ADMIN_BODY_LIMIT = 64 * 1024;

type AdminRequest = Request & { audit: Audit };

const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** The query string's parameters, the first of each name (a bare router parses none). */
function queryOf(url: string): Record<string, string> {
  const q = url.indexOf('?');
  // No prototype: a parameter named toString or __proto__ is a name like any other.
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (q === -1) return out;
  for (const [name, value] of new URLSearchParams(url.slice(q + 1))) out[name] ??= value;
  return out;
}

function serve(r: AdminRoute) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const { audit } = req as AdminRequest;
    const call: AdminCall = {
      params: req.params as Record<string, string>, query: queryOf(req.url), body: req.body as Record<string, unknown> | undefined, admin: audit.admin!,
      get keyId() { return audit.keyId; },
      set keyId(id) { audit.keyId = id; },
      get team() { return audit.team; },
      set team(name) { audit.team = name; },
    };
    Promise.resolve()
      .then(() => r.handle(call))
      .then((answer) => ('lines' in answer ? stream(res, answer) : sendJson(res, answer.status ?? 200, answer.body, { 'cache-control': 'no-store' })), next);
  };
}

/** Writes the lines as they come, waiting on the client when it reads slower; a failure midway cuts the response (its head is out). */
async function stream(res: Response, answer: StreamedAnswer): Promise<void> {
  res.writeHead(200, { 'content-type': answer.contentType, 'cache-control': 'no-store' });
  try {
    for await (const line of answer.lines) {
      if (res.destroyed) return;
      if (!res.write(line)) await drained(res);
    }
    res.end();
  } catch {
    res.destroy();
  }
}

export interface AdminRouterDeps {
  /** The digests of the admin keys in force: read on every request, so a reload changes them. */
  adminKeys: () => AdminKeys;
  logger: Logger;
}

export function createAdminHandler(routes: readonly AdminRoute[], deps: AdminRouterDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const router = express.Router({ caseSensitive: true, strict: true });
  const readBody = jsonBodyReader(ADMIN_BODY_LIMIT);
  router.use((req, res, next) => {
    const audit: Audit = { requestId: requestIdOf(req, res), method: req.method, action: 'unknown' };
    (req as AdminRequest).audit = audit;
    res.once('close', () => auditLine(deps.logger, audit, res.statusCode));
    next();
  });
  /** The admin key, then the body: after the route is matched, so a refusal's audit line names its action. */
  const admit = (action: string | undefined) => (req: Request, res: Response, next: NextFunction): void => {
    const { audit } = req as AdminRequest;
    if (action !== undefined) audit.action = action;
    try {
      const { admin, readOnly } = adminOf(deps.adminKeys(), req);
      audit.admin = admin;
      if (readOnly && req.method !== 'GET' && req.method !== 'HEAD') throw new GatewayError('read_only', 'This admin key may only read (it is listed in admin.readKeys); use an admin key of admin.keys to make changes.');
    } catch (err) {
      return next(err);
    }
    if (hasBody(req) && req.method !== 'GET' && req.method !== 'HEAD') readBody(req, res, next);
    else next();
  };
  const allowed = new Map<string, AdminMethod[]>();
  for (const r of routes) {
    router[r.method.toLowerCase() as 'get'](r.path, admit(r.action), serve(r));
    allowed.set(r.path, [...(allowed.get(r.path) ?? []), r.method]);
  }
  for (const [path, methods] of allowed) {
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
    router.all(path, admit(undefined), (_req, res, next) => {
      res.setHeader('allow', allow);
      next(new GatewayError('method_not_allowed', `This path accepts ${allow} only.`));
    });
  }
  router.use(admit(undefined), (req, _res, next) => {
    const path = (req.url ?? '/').split('?')[0].slice(0, 200);
    next(new GatewayError('not_found', `No such admin endpoint: ${req.method} ${path}. The admin API is under /admin/ (see docs/admin.md).`));
  });
  router.use(errorMiddleware(deps.logger));
  return (req, res) => router(req as Request, res as Response, lastResort(deps.logger, res));
}
