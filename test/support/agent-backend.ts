// A scripted model backend on loopback (node:http, port 0) for running real
// agent clients (Codex, Claude Code) against: it plays the two-turn script of
// agent-script.ts in three wire protocols, JSON or streamed as the request
// asks (a stream's frames `paceMs` apart when that is set, each one's send
// time recorded), and records every request (path, headers, body):
//   POST /v1/responses                 OpenAI Responses (Codex's wire_api = "responses")
//   POST /v1/messages                  Anthropic Messages (Claude Code adds ?beta=true)
//   POST /v1/messages/count_tokens     a rough count
//   POST /v1/chat/completions          chat completions, as a translated route's backend gets them
//   GET  /v1/models                    one model, in the OpenAI or (with anthropic-version) Anthropic shape
// Usage:
//   const backend = await startAgentBackend({ command: 'echo ok > marker.txt', readPath: '/tmp/x/secret.txt' });
//   runCodexExec({ baseUrl: backend.base, … }); runClaudePrint({ baseUrl: backend.url, … })
//   const paced = await startAgentBackend({ command: 'true', thinking: 'Hmm.' }, { paceMs: 50 });
import type { IncomingMessage, ServerResponse } from 'node:http';
import { chatAnswer, chatView } from './agent-chat';
import { messagesAnswer, messagesView } from './agent-messages';
import { responsesAnswer, responsesView } from './agent-responses';
import { nextStep, roughTokens, type AgentScript, type TurnView, type WireAnswer } from './agent-script';
import { startRecordingServer, type RecordedRequest } from './json-server';

export interface AgentBackend {
  /** http://127.0.0.1:<port>: Claude Code's ANTHROPIC_BASE_URL. */
  url: string;
  /** The url with /v1: Codex's provider base_url. */
  base: string;
  requests: RecordedRequest[];
  /** Each streamed answer's frames with the time (Date.now()) each was written, in order. */
  streams: SentFrame[][];
  /** The requests to one path (query string ignored), in order. */
  to(path: string): RecordedRequest[];
  close(): Promise<void>;
}

export interface SentFrame { at: number; frame: string }

export interface AgentBackendOptions {
  /** Milliseconds between a stream's frames; 0 (default): the whole stream in one write. */
  paceMs?: number;
}

interface Protocol {
  view(body: any): TurnView;
  answer(body: any, step: ReturnType<typeof nextStep>, n: number): WireAnswer;
}

const PROTOCOLS: Record<string, Protocol> = {
  '/v1/responses': { view: responsesView, answer: responsesAnswer },
  '/v1/messages': { view: messagesView, answer: messagesAnswer },
  '/v1/chat/completions': { view: chatView, answer: chatAnswer },
};

export const AGENT_MODEL = 'sluice-agent';

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
  res.end(text);
}

function models(req: IncomingMessage): unknown {
  if (req.headers['anthropic-version'] !== undefined) {
    const model = { type: 'model', id: AGENT_MODEL, display_name: 'Sluice agent test model', created_at: '2025-01-01T00:00:00Z' };
    return { data: [model], has_more: false, first_id: AGENT_MODEL, last_id: AGENT_MODEL };
  }
  return { object: 'list', data: [{ id: AGENT_MODEL, object: 'model', created: 1735689600, owned_by: 'sluice-test' }] };
}

function error(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { type: 'error', error: { type: status === 404 ? 'not_found_error' : 'invalid_request_error', message } });
}

/** Writes a stream's frames, `paceMs` apart, recording when each left; stops if the client goes. */
function writeFrames(res: ServerResponse, frames: string[], paceMs: number, sent: SentFrame[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  if (paceMs === 0) {
    const at = Date.now();
    for (const frame of frames) sent.push({ at, frame });
    return void res.end(frames.join(''));
  }
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    sent.push({ at: Date.now(), frame: frames[i] });
    res.write(frames[i++]);
    if (i < frames.length) setTimeout(next, paceMs);
    else res.end();
  };
  next();
}

export async function startAgentBackend(script: AgentScript, options: AgentBackendOptions = {}): Promise<AgentBackend> {
  let answers = 0;
  const streams: SentFrame[][] = [];
  const handle = (req: IncomingMessage, res: ServerResponse, body: any): void => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') return sendJson(res, 200, models(req));
    if (req.method !== 'POST') return error(res, 404, `no route for ${req.method} ${path}`);
    if (typeof body !== 'object' || body === null) return error(res, 400, 'the body is not a JSON object');
    if (path === '/v1/messages/count_tokens') return sendJson(res, 200, { input_tokens: roughTokens(body) });
    const protocol = PROTOCOLS[path];
    if (protocol === undefined) return error(res, 404, `no route for POST ${path}`);
    const answer = protocol.answer(body, nextStep(script, protocol.view(body)), ++answers);
    if (body.stream !== true) return sendJson(res, 200, answer.json);
    const sent: SentFrame[] = [];
    streams.push(sent);
    writeFrames(res, answer.frames, options.paceMs ?? 0, sent);
  };
  const server = await startRecordingServer(handle);
  return {
    url: server.url,
    base: server.base,
    requests: server.requests,
    streams,
    to: (path) => server.requests.filter((r) => r.url.split('?')[0] === path),
    close: server.close,
  };
}
