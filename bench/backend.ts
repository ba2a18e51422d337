// Benchmark backend: an OpenAI-format server with no work to do, so what is
// measured is the proxy in front of it. Instant JSON for chat and images; for
// `stream: true`, `events` content events `gapMs` apart, read from the model
// name "bench-e<events>-g<gapMs>" (default 20 events, 20 ms).
// Run: node dist/bench/backend.js [port]  (prints {"port": N} when listening)
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const CHAT = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1_700_000_000, model: 'bench',
  choices: [{ index: 0, message: { role: 'assistant', content: 'The quick brown fox jumps over the lazy dog.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 10, total_tokens: 22 },
});
const IMAGES = JSON.stringify({ created: 1_700_000_000, data: [{ url: 'https://images.example/bench.png' }] });

function json(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function stream(res: ServerResponse, events: number, gapMs: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  const base = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":';
  let i = 0;
  const tick = () => {
    if (res.destroyed) return;
    if (i < events) {
      const delta = i === 0 ? '{"role":"assistant","content":"w0"}' : `{"content":" w${i}"}`;
      res.write(`data: ${base}${delta},"finish_reason":null}],"usage":null}\n\n`);
      i++;
      setTimeout(tick, gapMs);
      return;
    }
    res.write(`data: ${base}{},"finish_reason":"stop"}]}\n\n`);
    res.write(`data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":${events},"total_tokens":${12 + events}}}\n\n`);
    res.end('data: [DONE]\n\n');
  };
  tick();
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.url?.endsWith('/images/generations')) return json(res, IMAGES);
    // A gateway's health probe (a GET), or a body cut short: answered, never a crash of the run.
    let body: { stream?: unknown; model?: string };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(req.method === 'POST' ? 400 : 404, { 'content-type': 'application/json' });
      return void res.end('{}');
    }
    if (body.stream !== true) return json(res, CHAT);
    const m = /^bench-e(\d+)-g(\d+)$/.exec(body.model ?? '');
    stream(res, m ? Number(m[1]) : 20, m ? Number(m[2]) : 20);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
