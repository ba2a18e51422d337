// A backend that attacks the gateway on command, for the fault suites. The
// model name the gateway sends upstream picks the misbehaviour:
//   deep-json     a 200 chat answer with a field nested 100,000 levels deep
//   deep-event    a stream whose second chunk holds a field nested 100,000 levels deep
//   odd-choices   a native-format stream whose `choices` is a number
//   neg-usage     an answer reporting negative token counts
//   huge-json     a 200 JSON answer of `hugeBytes` bytes
//   endless-event a stream event that never ends (no blank line), `hugeBytes` long
//   linger        a stream that stays open after [DONE], sending pings
//   hold          answers after `holdMs` (occupies a socket)
//   drop-reused   answers on a fresh connection; on a reused one, closes it unanswered
//                 (a keep-alive socket the backend dropped while idle, without a hint)
//   no-done       a complete stream (finish reason, usage) closed without [DONE]
//   bad-event     a stream with one event that is not JSON between healthy ones
//   ok            a plain answer
import { startJsonServer } from './json-server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface HostileBackend {
  base: string;
  /** Requests whose body reached the backend, by model. */
  seen: Record<string, number>;
  /** Connections the backend dropped unanswered (drop-reused). */
  dropped: number;
  /** Connections still open (sockets held by the gateway). */
  open(): number;
  close(): Promise<void>;
}

const deep = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
const chunk = (content: string) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const answer = (extra: object = {}) => JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], ...extra });

function json(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sse(res: ServerResponse): (data: string) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  return (data) => res.write(`data: ${data}\n\n`);
}

export async function startHostileBackend(opts: { hugeBytes?: number; holdMs?: number } = {}): Promise<HostileBackend> {
  const { hugeBytes = 2 * 1024 * 1024, holdMs = 2000 } = opts;
  const sockets = new Set<Socket>();
  const served = new WeakSet<Socket>();
  const backend: HostileBackend = { base: '', seen: {}, dropped: 0, open: () => sockets.size, close: async () => undefined };

  const handle = (req: IncomingMessage, res: ServerResponse, body: any): void => {
    const model: string = body?.model ?? '';
    backend.seen[model] = (backend.seen[model] ?? 0) + 1;
    const socket = req.socket;
    if (model === 'drop-reused' && served.has(socket)) {
      backend.dropped++;
      socket.destroy();
      return;
    }
    served.add(socket);
    switch (model) {
      case 'deep-json': return json(res, answer({ choices: [{ index: 0, message: { role: 'assistant', content: 'hi', extra: '@DEEP@' }, finish_reason: 'stop' }] }).replace('"@DEEP@"', deep(100_000)));
      case 'neg-usage': return json(res, answer({ usage: { prompt_tokens: -5, completion_tokens: -7, total_tokens: -12 } }));
      case 'huge-json': return json(res, answer({ padding: 'x'.repeat(hugeBytes) }));
      case 'hold': {
        const timer = setTimeout(() => json(res, answer()), holdMs);
        return void res.on('close', () => clearTimeout(timer));
      }
      case 'deep-event': { const send = sse(res); send(chunk('a')); send(chunk('@DEEP@').replace('"@DEEP@"', deep(100_000))); send('[DONE]'); return void res.end(); }
      case 'no-done': {
        const send = sse(res);
        send(chunk('a'));
        send(JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } }));
        return void res.end();
      }
      case 'bad-event': { const send = sse(res); send(chunk('a')); send('{not json'); send(chunk('b')); send('[DONE]'); return void res.end(); }
      case 'odd-choices': { const send = sse(res); send(JSON.stringify({ choices: 42 })); send('[DONE]'); return void res.end(); }
      case 'endless-event': { sse(res); res.write('data: '); return void res.end('y'.repeat(hugeBytes)); }
      case 'linger': {
        const send = sse(res);
        send(chunk('a'));
        send('[DONE]');
        const ping = setInterval(() => res.write(': ping\n\n'), 50);
        res.on('close', () => clearInterval(ping));
        return;
      }
      default: return json(res, answer());
    }
  };

  const server = await startJsonServer(handle);
  server.server.on('connection', (s: Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  backend.base = server.base;
  backend.close = server.close;
  return backend;
}
