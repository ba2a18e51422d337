// A backend that serves OpenAI's Responses API natively (POST /v1/responses)
// on loopback, for what the agent backend's two-step script cannot do: it
// answers as the stand-in chat backend does (openai-answers.ts), read off the
// Responses input, so a test asserts the same answers on a translated and a
// native route: a call of the first function tool while the user spoke last,
// "The tool said: …" after a function_call_output, JSON for text.format, else
// the plain reply. JSON or the full event stream (agent-responses.ts writes
// it), every frame's send time recorded. The model name picks the pacing:
//   slow-*    each event `gapMs` after the one before (default 100 ms)
//   break-*   the first four events, then the connection dies
//   hold-*    the first four events, then nothing until the client leaves
//   anything else: the whole stream at once
// Usage:
//   const backend = await startResponsesBackend();
//   upstreams: { r: { url: backend.base, format: 'openai', apis: ['chat', 'responses'] } }
import type { ServerResponse } from 'node:http';
import { message, responseWire } from './agent-responses';
import { startRecordingServer, type RecordedRequest } from './json-server';
import { answerFor, type Answer } from './openai-answers';

export interface ResponsesBackend {
  url: string;
  /** The url with /v1, as an upstream's `url`. */
  base: string;
  requests: RecordedRequest[];
  /** The last request's body. */
  last(): any;
  /** Per streamed request: each frame's event type and when it left (Date.now()). */
  sent: Array<Array<{ type: string; at: number }>>;
  /** Streams the gateway closed before they ended. */
  aborted(): number;
  close(): Promise<void>;
}

const textOf = (content: unknown): string => (typeof content === 'string' ? content
  : Array.isArray(content) ? content.map((p: any) => p?.text ?? '').join('') : '');

/** The Responses request as the chat view answerFor reads: the last turn, the function tools, the output format. */
function chatView(body: any): any {
  const input: any[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body.input) ? body.input : [];
  const last = input.at(-1);
  const messages = last?.type === 'function_call_output' ? [{ role: 'tool', content: textOf(last.output) }] : [{ role: last?.role ?? 'user', content: textOf(last?.content) }];
  const tools = (Array.isArray(body.tools) ? body.tools : []).filter((t: any) => t?.type === 'function')
    .map((t: any) => ({ type: 'function', function: { name: t.name, parameters: t.parameters } }));
  const format = body.text?.format;
  const response_format = format?.type === 'json_schema' ? { type: 'json_schema', json_schema: { schema: format.schema } } : format;
  return { messages, tools, response_format, tool_choice: typeof body.tool_choice === 'string' ? body.tool_choice : undefined };
}

function outputOf(answer: Answer, n: number): any[] {
  if (answer.kind === 'text') return [message(`msg_${n}`, answer.text)];
  return [{ type: 'function_call', id: `fc_${n}`, call_id: answer.id, name: answer.name, arguments: answer.arguments, status: 'completed' }];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startResponsesBackend(opts: { gapMs?: number } = {}): Promise<ResponsesBackend> {
  const gapMs = opts.gapMs ?? 100;
  const sent: ResponsesBackend['sent'] = [];
  let answers = 0;
  let aborted = 0;
  const stream = async (res: ServerResponse, model: string, frames: string[]): Promise<void> => {
    const times: Array<{ type: string; at: number }> = [];
    sent.push(times);
    res.on('close', () => { if (!res.writableFinished) aborted++; });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const cutAt = model.startsWith('break-') || model.startsWith('hold-') ? 4 : frames.length;
    for (const frame of frames.slice(0, cutAt)) {
      if (res.destroyed) return;
      times.push({ type: /^event: (\S+)/.exec(frame)![1], at: Date.now() });
      // Written out before the next, so a connection cut after them cuts nothing they carried.
      await new Promise((resolve) => res.write(frame, resolve));
      if (model.startsWith('slow-')) await sleep(gapMs);
    }
    if (model.startsWith('break-')) return void res.socket?.destroy();
    if (!model.startsWith('hold-')) res.end();
  };
  const server = await startRecordingServer((req, res, body) => {
    if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/responses' || typeof body?.model !== 'string') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { message: `no route for ${req.method} ${req.url}`, type: 'invalid_request_error', param: null, code: null } }));
    }
    const n = ++answers;
    const wire = responseWire(body, outputOf(answerFor(chatView(body)), n), n);
    if (body.stream === true) return void stream(res, body.model, wire.frames);
    const text = JSON.stringify(wire.json);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
    res.end(text);
  });
  return {
    url: server.url, base: server.base, requests: server.requests, sent, aborted: () => aborted,
    last: () => server.requests.at(-1)?.body,
    close: server.close,
  };
}
