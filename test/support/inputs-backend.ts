// A scripted model server for the input endpoints, in the shapes vLLM and
// OpenAI answer: /v1/embeddings (float, or base64 of little-endian float32),
// /v1/rerank and /v1/score (vLLM's, with its usage), /v1/moderations
// (OpenAI's, no usage). Its token count is the words of each text (a token
// id counts as one), so a test knows the usage it reported; `served` keeps
// each request's path and that count. Model `broken` gets an answer without
// its list of results.
import type { ServerResponse } from 'node:http';
import { startRecordingServer, type RecordingServer } from './json-server';

export interface InputsBackend extends RecordingServer {
  served: Array<{ path: string; tokens: number }>;
}

/** The backend's tokens for one text or token array. */
export const tokensOf = (input: unknown): number => (Array.isArray(input) ? input.length : String(input).split(/\s+/).filter((w) => w !== '').length);

/** The vector the backend gives input `i`: `dims` numbers, exact in float32. */
export const vectorOf = (i: number, dims: number): number[] => Array.from({ length: dims }, (_, j) => (i + 1) * 0.5 + j * 0.25);

const base64Of = (v: number[]): string => Buffer.from(new Float32Array(v).buffer).toString('base64');

const listOf = (input: unknown): unknown[] => (Array.isArray(input) && (input.length === 0 || typeof input[0] !== 'number') ? input : [input]);
const textOf = (d: unknown): string => (typeof d === 'string' ? d : (d as { text: string }).text);

function send(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startInputsBackend(): Promise<InputsBackend> {
  const served: InputsBackend['served'] = [];
  const server = await startRecordingServer((req, res, body) => {
    const path = req.url ?? '';
    const count = (tokens: number): number => { served.push({ path, tokens }); return tokens; };
    if (body?.model === 'broken') return send(res, { object: 'list', model: 'broken' });
    if (path === '/v1/embeddings') {
      const inputs = listOf(body.input);
      const tokens = count(inputs.reduce((n: number, x) => n + tokensOf(x), 0));
      const dims = body.dimensions ?? 4;
      const data = inputs.map((_, i) => ({ object: 'embedding', index: i, embedding: body.encoding_format === 'base64' ? base64Of(vectorOf(i, dims)) : vectorOf(i, dims) }));
      return send(res, { object: 'list', model: body.model, data, usage: { prompt_tokens: tokens, total_tokens: tokens } });
    }
    if (path === '/v1/rerank') {
      const docs: string[] = body.documents.map(textOf);
      const tokens = count(docs.reduce((n, d) => n + tokensOf(body.query) + tokensOf(d), 0));
      const results = docs.map((text, index) => ({ index, relevance_score: 1 / (index + 1), document: { text } })).slice(0, body.top_n || docs.length);
      return send(res, { id: 'rerank-1', model: body.model, usage: { total_tokens: tokens }, results });
    }
    if (path === '/v1/score') {
      const left = listOf(body.text_1);
      const right = listOf(body.text_2);
      const pairs = right.map((r, i) => [left.length === 1 ? left[0] : left[i], r]);
      const tokens = count(pairs.reduce((n, [a, b]) => n + tokensOf(a) + tokensOf(b), 0));
      const data = pairs.map((_, index) => ({ index, object: 'score', score: 0.5 }));
      return send(res, { id: 'score-1', object: 'list', created: 1, model: body.model, data, usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0 } });
    }
    if (path === '/v1/moderations') {
      count(0);
      const results = listOf(body.input).map(() => ({ flagged: false, categories: { violence: false }, category_scores: { violence: 0.01 } }));
      return send(res, { id: 'modr-1', model: body.model, results });
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `no ${path}` } }));
  });
  return Object.assign(server, { served });
}
