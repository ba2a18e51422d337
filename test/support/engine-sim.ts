// A model-server stand-in for fleet tests and the scored-picker benchmark:
// it serves the OpenAI chat format (JSON or SSE) over a real queue with a
// fixed number of running slots and a KV capacity (a request starts when a
// slot is free and its prompt and answer fit), a prefix cache (an LRU of
// prompt blocks, chained, as vLLM's automatic prefix caching keeps them) that
// makes a cached prompt's first event come sooner, and a vLLM-style /metrics.
// Time is real (timers), so a test or a benchmark sees real queueing.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startJsonServer } from './json-server';

export interface EngineSimOptions {
  slots?: number;
  kvCapacityTokens?: number;
  /** Prompt blocks the prefix cache keeps (least recently used evicted first). */
  cacheBlocks?: number;
  blockChars?: number;
  /** The first event's fixed cost, and its cost per 1000 prompt tokens not in the prefix cache. */
  firstEventMs?: number;
  prefillMsPerKToken?: number;
  outputTokens?: number;
  tokensPerEvent?: number;
  decodeMsPerToken?: number;
  port?: number;
}

export type MetricsMode = 'ok' | 'fail' | 'hang';

export interface EngineSim {
  url: string;
  /** The base URL with /v1, as an upstream endpoint's `url`. */
  base: string;
  port: number;
  waiting(): number;
  running(): number;
  /** Completions received, prompt tokens, prompt tokens found in the prefix cache, answers finished. */
  stats: { requests: number; promptTokens: number; cachedTokens: number; completed: number; metricsScrapes: number };
  /** How /metrics answers from now on. */
  setMetrics(mode: MetricsMode): void;
  close(): Promise<void>;
}

const tokensOf = (chars: number): number => Math.ceil(chars / 4);

interface Job { prompt: string; body: any; res: ServerResponse; reserved: number; gone: boolean; timer?: NodeJS.Timeout }

export async function startEngineSim(opts: EngineSimOptions = {}): Promise<EngineSim> {
  const o = { slots: 4, kvCapacityTokens: 16_000, cacheBlocks: 2_000, blockChars: 64, firstEventMs: 5, prefillMsPerKToken: 40, outputTokens: 24, tokensPerEvent: 6, decodeMsPerToken: 4, ...opts };
  const queue: Job[] = [];
  const active = new Set<Job>();
  let kvUsed = 0;
  const cache = new Set<string>();
  const stats = { requests: 0, promptTokens: 0, cachedTokens: 0, completed: 0, metricsScrapes: 0 };
  let metricsMode: MetricsMode = 'ok';
  const hung = new Set<ServerResponse>();

  /** Chained block hashes of the prompt's whole blocks. */
  const blocksOf = (prompt: string): string[] => {
    const out: string[] = [];
    let prev = '';
    for (let i = 0; i + o.blockChars <= prompt.length; i += o.blockChars) out.push(prev = createHash('sha1').update(prev).update(prompt.slice(i, i + o.blockChars)).digest('base64'));
    return out;
  };

  const finish = (job: Job): void => {
    if (!active.delete(job)) return;
    clearTimeout(job.timer);
    kvUsed -= job.reserved;
    admit();
  };

  const admit = (): void => {
    while (queue.length > 0 && active.size < o.slots) {
      const job = queue[0];
      if (job.gone) { queue.shift(); continue; }
      if (active.size > 0 && kvUsed + job.reserved > o.kvCapacityTokens) return; // the head waits for KV room
      queue.shift();
      active.add(job);
      kvUsed += job.reserved;
      start(job);
    }
  };

  const start = (job: Job): void => {
    const blocks = blocksOf(job.prompt);
    let hit = 0;
    while (hit < blocks.length && cache.has(blocks[hit])) hit++;
    for (let i = blocks.length - 1; i >= 0; i--) { cache.delete(blocks[i]); cache.add(blocks[i]); }
    for (const oldest of cache) { if (cache.size <= o.cacheBlocks) break; cache.delete(oldest); }
    const promptTokens = tokensOf(job.prompt.length);
    const cachedTokens = Math.min(promptTokens, tokensOf(hit * o.blockChars));
    stats.promptTokens += promptTokens;
    stats.cachedTokens += cachedTokens;
    const prefillMs = o.firstEventMs + ((promptTokens - cachedTokens) / 1000) * o.prefillMsPerKToken;
    const words = Array.from({ length: o.outputTokens }, (_, i) => ` w${(job.prompt.length + i) % 97}`);
    const usage = { prompt_tokens: promptTokens, completion_tokens: o.outputTokens, total_tokens: promptTokens + o.outputTokens, prompt_tokens_details: { cached_tokens: cachedTokens } };
    const { res } = job;
    if (!job.body.stream) {
      job.timer = setTimeout(() => {
        const body = JSON.stringify({ id: 'sim', object: 'chat.completion', created: 1, model: job.body.model, choices: [{ index: 0, message: { role: 'assistant', content: words.join('') }, finish_reason: 'stop' }], usage });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
        stats.completed++;
        finish(job);
      }, prefillMs + o.outputTokens * o.decodeMsPerToken);
      return;
    }
    const chunk = (delta: object, finish_reason: string | null = null, extra: object = {}) => `data: ${JSON.stringify({ id: 'sim', object: 'chat.completion.chunk', created: 1, model: job.body.model, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`;
    let sent = 0;
    const next = (): void => {
      if (sent === 0) res.writeHead(200, { 'content-type': 'text/event-stream' });
      const piece = words.slice(sent, sent + o.tokensPerEvent).join('');
      sent += o.tokensPerEvent;
      if (sent < o.outputTokens) {
        res.write(chunk(sent === o.tokensPerEvent ? { role: 'assistant', content: piece } : { content: piece }));
        job.timer = setTimeout(next, o.tokensPerEvent * o.decodeMsPerToken);
        return;
      }
      res.end(chunk({ content: piece }, 'stop') + `data: ${JSON.stringify({ id: 'sim', object: 'chat.completion.chunk', created: 1, model: job.body.model, choices: [], usage })}\n\ndata: [DONE]\n\n`);
      stats.completed++;
      finish(job);
    };
    job.timer = setTimeout(next, prefillMs);
  };

  const metricsText = (): string => {
    const labels = '{model_name="sim"}';
    return [
      '# HELP vllm:num_requests_running Number of requests in model execution batches.', '# TYPE vllm:num_requests_running gauge', `vllm:num_requests_running${labels} ${active.size}.0`,
      '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.', '# TYPE vllm:num_requests_waiting gauge', `vllm:num_requests_waiting${labels} ${queue.filter((j) => !j.gone).length}.0`,
      '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.', '# TYPE vllm:kv_cache_usage_perc gauge', `vllm:kv_cache_usage_perc${labels} ${kvUsed / o.kvCapacityTokens}`,
      '# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.', '# TYPE vllm:prefix_cache_queries_total counter', `vllm:prefix_cache_queries_total${labels} ${stats.promptTokens}.0`,
      '# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.', '# TYPE vllm:prefix_cache_hits_total counter', `vllm:prefix_cache_hits_total${labels} ${stats.cachedTokens}.0`,
      '# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.', '# TYPE vllm:time_to_first_token_seconds histogram',
      ...['0.01', '0.1', '1.0', '+Inf'].map((le) => `vllm:time_to_first_token_seconds_bucket{le="${le}",model_name="sim"} ${stats.completed}.0`),
      '',
    ].join('\n');
  };

  const server = await startJsonServer((req: IncomingMessage, res: ServerResponse, body: any) => {
    if (req.method === 'GET' && req.url === '/metrics') {
      stats.metricsScrapes++;
      if (metricsMode === 'hang') { hung.add(res); res.on('close', () => hung.delete(res)); return; }
      if (metricsMode === 'fail') { res.writeHead(500); res.end('engine error'); return; }
      const text = metricsText();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    const prompt = (body.messages as Array<{ role: string; content: unknown }>).map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}\n`).join('');
    stats.requests++;
    const job: Job = { prompt, body, res, reserved: tokensOf(prompt.length) + o.outputTokens, gone: false };
    res.on('close', () => { job.gone = true; finish(job); });
    queue.push(job);
    admit();
  }, opts.port);
  return {
    url: server.url,
    base: server.base,
    port: server.port,
    waiting: () => queue.filter((j) => !j.gone).length,
    running: () => active.size,
    stats,
    setMetrics: (mode) => { metricsMode = mode; },
    close: () => {
      for (const job of active) clearTimeout(job.timer);
      return server.close();
    },
  };
}
