// A real OpenAI-compatible backend on loopback (node:http, port 0), shaped
// like vLLM or OpenAI itself, for driving real client libraries through the
// gateway. It records every request. The model name picks the behaviour:
//   busy-*      429, Retry-After: 1, OpenAI's rate_limit_error body
//   ctxlen-*    400 context_length_exceeded (param: messages)
//   noctype-*   streams with content-type application/octet-stream
//   b64only-*, gpt-image-*   images always come back as b64_json
//   anything else: a normal answer; see openai-answers.ts for which one.
// Usage:
//   const backend = await startOpenAIBackend();
//   upstreams: { b: { url: backend.base, format: 'openai' } }
import { startRecordingServer, type RecordedRequest } from './json-server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerFor, completionChunks, completionJson } from './openai-answers';

export interface OpenAIBackend {
  url: string;
  /** Base URL with /v1, as an upstream's `url`. */
  base: string;
  requests: RecordedRequest[];
  /** The last request to a path ending with `suffix`. */
  last(suffix?: string): RecordedRequest;
  close(): Promise<void>;
}

/** A 1x1 PNG, what b64_json carries. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
export const imageUrl = (i: number): string => `https://images.example/generated-${i}.png`;
export const revisedPrompt = (prompt: string): string => `A detailed rendering of ${prompt}`;

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

const openaiError = (message: string, type: string, code: string | null, param: string | null) => ({ error: { message, type, param, code } });

/** The backend's own refusals, chosen by model name; true when one was sent. */
function refuseByModel(res: ServerResponse, model: string): boolean {
  if (model.startsWith('busy-')) {
    sendJson(res, 429, openaiError(`Rate limit reached for ${model} on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1s.`, 'rate_limit_error', 'rate_limit_exceeded', null), { 'retry-after': '1' });
    return true;
  }
  if (model.startsWith('ctxlen-')) {
    sendJson(res, 400, openaiError("This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.", 'invalid_request_error', 'context_length_exceeded', 'messages'));
    return true;
  }
  return false;
}

let answers = 0;

function chat(res: ServerResponse, body: any): void {
  const answer = answerFor(body);
  const id = `chatcmpl-${String(++answers).padStart(6, '0')}`;
  if (body.stream !== true) return sendJson(res, 200, completionJson(body, answer, id));
  // vLLM behind some proxies answers SSE without the event-stream type; clients still read it.
  const contentType = String(body.model).startsWith('noctype-') ? 'application/octet-stream' : 'text/event-stream; charset=utf-8';
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache' });
  for (const data of completionChunks(body, answer, id)) res.write(`data: ${data}\n\n`);
  res.end();
}

function images(res: ServerResponse, body: any): void {
  const n = Number.isInteger(body.n) && body.n > 0 ? body.n : 1;
  const model = String(body.model);
  // gpt-image models know only base64 and refuse response_format; dall-e ones honour it.
  const b64 = body.response_format === 'b64_json' || model.startsWith('b64only-') || model.startsWith('gpt-image-');
  const data = Array.from({ length: n }, (_, i) => ({ ...(b64 ? { b64_json: PNG_BASE64 } : { url: imageUrl(i) }), revised_prompt: revisedPrompt(String(body.prompt)) }));
  sendJson(res, 200, { created: Math.floor(Date.now() / 1000), data });
}

function handle(req: IncomingMessage, res: ServerResponse, body: any): void {
  const path = (req.url ?? '').split('?')[0];
  const known = req.method === 'POST' && (path === '/v1/chat/completions' || path === '/v1/images/generations');
  if (!known) return sendJson(res, 404, openaiError(`Unknown request URL: ${req.method} ${path}.`, 'invalid_request_error', 'unknown_url', null));
  if (body === undefined || typeof body.model !== 'string') return sendJson(res, 400, openaiError('We could not parse the JSON body of your request.', 'invalid_request_error', null, null));
  if (refuseByModel(res, body.model)) return;
  if (path === '/v1/images/generations') return images(res, body);
  chat(res, body);
}

export async function startOpenAIBackend(): Promise<OpenAIBackend> {
  const server = await startRecordingServer(handle);
  const { requests } = server;
  return {
    url: server.url,
    base: server.base,
    requests,
    last: (suffix = '') => {
      const found = requests.filter((r) => r.url.endsWith(suffix)).at(-1);
      if (!found) throw new Error(`the backend received no request to *${suffix}`);
      return found;
    },
    close: server.close,
  };
}
