// A backend that serves the Responses and Messages APIs itself and answers
// each model with what the test scripted for it: the exact events of a
// stream (a Responses stream's sequence_numbers added in order), or a JSON
// answer. For shapes no other test backend sends: text only in an event that
// repeats it whole, refusals, reasoning, custom tool input, text already in
// a block's start, citations. The wrappers give a script its protocol's
// opening and closing events, with USAGE.
//
//   const b = await startScriptedBackend();
//   b.script('rn-refusal', responsesScript([...events], [...output items]));
//   upstreams: { resp: { url: b.base, apis: ['responses'] }, msg: { url: b.base, apis: ['messages'] } }
import { startRecordingServer, type RecordedRequest } from './json-server';

type Event = Record<string, unknown>;

export interface Script {
  events?: Event[];
  json?: Event;
}

export interface ScriptedBackend {
  base: string;
  /** Every request it received, in order: what the gateway sent. */
  requests: RecordedRequest[];
  script(model: string, script: Script): void;
  close(): Promise<void>;
}

export const USAGE = { prompt: 7, completion: 42 };

const responseShell = { id: 'resp_scripted', object: 'response', created_at: 1_700_000_000, model: 'scripted', status: 'in_progress', output: [], usage: null, error: null, incomplete_details: null };
const responsesUsage = { input_tokens: USAGE.prompt, input_tokens_details: { cached_tokens: 0 }, output_tokens: USAGE.completion, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: USAGE.prompt + USAGE.completion };

/** A Responses stream: created, in_progress, `events`, then completed with `output`; the JSON answer is that response. */
export function responsesScript(events: Event[], output: Event[]): Script {
  const done = { ...responseShell, status: 'completed', output, usage: responsesUsage };
  return {
    events: [{ type: 'response.created', response: responseShell }, { type: 'response.in_progress', response: responseShell }, ...events, { type: 'response.completed', response: done }],
    json: done,
  };
}

const messagesUsage = { input_tokens: USAGE.prompt, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: USAGE.completion };
const messageShell = { id: 'msg_scripted', type: 'message', role: 'assistant', model: 'scripted', content: [], stop_reason: null, stop_sequence: null, usage: { ...messagesUsage, output_tokens: 1 } };

/** A Messages stream: message_start, `events`, message_delta (end_turn), message_stop; the JSON answer has `content`. */
export function messagesScript(events: Event[], content: Event[]): Script {
  return {
    events: [{ type: 'message_start', message: messageShell }, ...events,
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: USAGE.completion } }, { type: 'message_stop' }],
    json: { ...messageShell, content, stop_reason: 'end_turn', usage: messagesUsage },
  };
}

export async function startScriptedBackend(): Promise<ScriptedBackend> {
  const scripts = new Map<string, Script>();
  const server = await startRecordingServer((req, res, body) => {
    const script = scripts.get(String(body?.model));
    const path = (req.url ?? '').split('?')[0];
    if (script === undefined || !/\/(responses|messages)$/.test(path)) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { message: `no script for ${body?.model} at ${path}` } }));
    }
    if (body.stream !== true) {
      const text = JSON.stringify(script.json);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
      return void res.end(text);
    }
    const responses = path.endsWith('/responses');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.end((script.events ?? []).map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify(responses ? { ...e, sequence_number: i } : e)}\n\n`).join(''));
  });
  return { base: server.base, requests: server.requests, script: (model, s) => void scripts.set(model, s), close: server.close };
}
