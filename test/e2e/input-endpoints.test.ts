// The input endpoints first-class (docs/endpoints.md): embeddings and
// moderations through the official openai SDK unchanged, rerank and score in
// vLLM's shape with plain fetch, each under the key's allow-list, the
// endpoint's limits, the content filter and PII on its texts, and one usage
// record whose tokens are the backend's and whose cost is the price table's.
import OpenAI from 'openai';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { freePort } from '../support/net';
import { makeAdminKey } from '../support/admin';
import { startInputsBackend, vectorOf, type InputsBackend } from '../support/inputs-backend';
import { bearer, call, post, type JsonResponse } from '../support/http';
import { expectError } from '../support/errors';
import { exported } from '../support/spend';
import { until } from '../support/wait';
import { parseExposition, scrape, series } from '../support/metrics';

// $0.5 per million input tokens for the embedding model; the others at $2.
const PRICING = [{ model: 'emb', input: 0.5 }, { model: '*', input: 2, output: 10 }];
const NANOS_PER_TOKEN: Record<string, number> = { emb: 500, rr: 2000, mod: 2000 };

describe('embeddings, rerank, score and moderations', () => {
  const adminKey = makeAdminKey();
  const alice = makeKey('alice');
  const chatOnly = makeKey('chat-only', { models: ['chat-*'] });
  let backend: InputsBackend;
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    backend = await startInputsBackend();
    gw = await startGateway({
      admin: { keys: [adminKey.digest] },
      keys: [alice.entry, chatOnly.entry],
      upstreams: { b: { url: backend.base, format: 'openai' }, dead: { url: `http://127.0.0.1:${await freePort()}/v1`, format: 'openai' } },
      routes: [
        { model: 'emb-dead', upstream: 'dead', endpoints: ['embeddings'], fallbacks: ['emb'] },
        { model: 'broken', upstream: 'b', endpoints: ['embeddings', 'rerank'] },
        { model: 'emb', upstream: 'b', endpoints: ['embeddings'] },
        { model: 'rr', upstream: 'b', endpoints: ['rerank', 'score'] },
        { model: 'mod', upstream: 'b', endpoints: ['moderations'], upstreamModel: 'omni-moderation-latest' },
        { model: 'chat-1', upstream: 'b' },
      ],
      endpointLimits: { embeddings: { maxInputs: 4, maxChars: 200 }, rerank: { maxInputs: 3 }, score: { maxInputs: 3 }, moderations: { maxChars: 50 } },
      pricing: PRICING,
      plugins: [{ name: 'pii', input: 'redact', kinds: ['email'] }, { name: 'content-filter', terms: ['forbidden phrase'] }, { name: 'metrics' }],
    }, { admin: true, metrics: {} });
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: alice.key, maxRetries: 0, timeout: 5000 });
  });
  afterAll(async () => { await gw?.close(); await backend?.close(); });

  const send = (path: string, body: unknown, key = alice.key): Promise<JsonResponse> => post(`${gw.url}${path}`, body, bearer(key));
  const reached = (): number => backend.requests.length;

  it('embeddings through the openai SDK: floats as the backend sent them', async () => {
    const res = await client.embeddings.create({ model: 'emb', input: ['one two', 'three'], encoding_format: 'float', dimensions: 3 });
    expect(res.data.map((d) => d.embedding)).toEqual([vectorOf(0, 3), vectorOf(1, 3)]);
    expect(res.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(backend.requests.at(-1)!.body).toEqual({ model: 'emb', input: ['one two', 'three'], encoding_format: 'float', dimensions: 3 });
  });

  it('embeddings in base64: relayed byte for byte, and the SDK decodes them (its default when no format is named)', async () => {
    const decoded = await client.embeddings.create({ model: 'emb', input: 'alpha beta gamma' });
    expect(backend.requests.at(-1)!.body.encoding_format).toBe('base64');
    expect(decoded.data[0].embedding).toEqual(vectorOf(0, 4));
    const raw = await send('/v1/embeddings', { model: 'emb', input: 'alpha', encoding_format: 'base64' });
    expect(raw.status).toBe(200);
    expect(raw.body.data[0].embedding).toBe(Buffer.from(new Float32Array(vectorOf(0, 4)).buffer).toString('base64'));
  });

  it('embeddings of token arrays, one or several, on /v2 too', async () => {
    const res = await send('/v2/embeddings', { model: 'emb', input: [[1, 2, 3], [4, 5]] });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body.usage.prompt_tokens).toBe(5);
    expect((await send('/v1/embeddings', { model: 'emb', input: [7, 8, 9] })).status).toBe(200);
  });

  it('moderations through the openai SDK, the model renamed for the backend and named back to the client', async () => {
    const res = await client.moderations.create({ model: 'mod', input: ['be kind', 'be nice'] });
    expect(res.results).toHaveLength(2);
    expect(res.model).toBe('mod');
    expect(backend.requests.at(-1)!.body).toEqual({ model: 'omni-moderation-latest', input: ['be kind', 'be nice'] });
  });

  it('rerank and score in vLLM\'s shape, with plain fetch', async () => {
    const rerank = await fetch(`${gw.url}/v1/rerank`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...bearer(alice.key) },
      body: JSON.stringify({ model: 'rr', query: 'what is a gateway', documents: ['a proxy', { text: 'a door' }, 'a fish'], top_n: 2, return_documents: true }),
    });
    expect(rerank.status).toBe(200);
    const ranked = await rerank.json() as any;
    expect(ranked.results).toEqual([{ index: 0, relevance_score: 1, document: { text: 'a proxy' } }, { index: 1, relevance_score: 0.5, document: { text: 'a door' } }]);
    expect(ranked.usage).toEqual({ total_tokens: 18 });
    const v2 = await send('/v2/rerank', { model: 'rr', query: 'q', documents: ['d'] });
    expect(v2.status).toBe(200);
    const score = await fetch(`${gw.url}/v1/score`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...bearer(alice.key) },
      body: JSON.stringify({ model: 'rr', text_1: 'what is a gateway', text_2: ['a proxy', 'a door'] }),
    });
    expect(score.status).toBe(200);
    expect(((await score.json()) as any).data).toHaveLength(2);
  });

  it('a key without the model gets 403 on every endpoint, before the backend', async () => {
    const before = reached();
    expectError(await send('/v1/embeddings', { model: 'emb', input: 'x' }, chatOnly.key), 403, 'model_not_allowed', 'model');
    expectError(await send('/v1/rerank', { model: 'rr', query: 'q', documents: ['d'] }, chatOnly.key), 403, 'model_not_allowed', 'model');
    expectError(await send('/v1/score', { model: 'rr', text_1: 'a', text_2: 'b' }, chatOnly.key), 403, 'model_not_allowed', 'model');
    expectError(await send('/v1/moderations', { model: 'mod', input: 'x' }, chatOnly.key), 403, 'model_not_allowed', 'model');
    // A model no route serves for that endpoint: 404, naming the endpoint.
    const wrong = await send('/v1/embeddings', { model: 'rr', input: 'x' });
    expectError(wrong, 404, 'model_not_found', 'model');
    expect(wrong.body.error.message).toMatch(/not available for embeddings on \/v1/);
    expect(reached()).toBe(before);
  });

  it('an oversized request gets 400 naming the field that went over, on every endpoint', async () => {
    const before = reached();
    expectError(await send('/v1/embeddings', { model: 'emb', input: ['a', 'b', 'c', 'd', 'e'] }), 400, 'invalid_request', 'input');
    expectError(await send('/v1/embeddings', { model: 'emb', input: ['x'.repeat(150), 'y'.repeat(51)] }), 400, 'invalid_request', 'input');
    // Token ids count one a character.
    expectError(await send('/v1/embeddings', { model: 'emb', input: [Array(201).fill(1)] }), 400, 'invalid_request', 'input');
    expectError(await send('/v1/rerank', { model: 'rr', query: 'q', documents: ['1', '2', '3', '4'] }), 400, 'invalid_request', 'documents');
    expectError(await send('/v1/score', { model: 'rr', text_1: 'q', text_2: ['1', '2', '3', '4'] }), 400, 'invalid_request', 'text_2');
    const long = await send('/v1/moderations', { model: 'mod', input: ['x'.repeat(30), 'y'.repeat(21)] });
    expectError(long, 400, 'invalid_request', 'input');
    expect(long.body.error.message).toMatch(/50 characters/);
    expect(reached()).toBe(before);
  });

  it('strings where numbers go, and other malformed bodies, get 400 naming the field', async () => {
    const before = reached();
    expectError(await send('/v1/embeddings', { model: 'emb', input: 'x', dimensions: '3' }), 400, 'invalid_request', 'dimensions');
    expectError(await send('/v1/embeddings', { model: 'emb', input: 'x', encoding_format: 'int8' }), 400, 'invalid_request', 'encoding_format');
    expectError(await send('/v1/embeddings', { model: 'emb', input: [1, '2'] }), 400, 'invalid_request');
    expectError(await send('/v1/embeddings', { model: 'emb', input: [] }), 400, 'invalid_request', 'input');
    expectError(await send('/v1/embeddings', { model: 'emb' }), 400, 'invalid_request', 'input');
    expectError(await send('/v1/embeddings', { model: 7, input: 'x' }), 400, 'invalid_request', 'model');
    // A field the gateway does not know could carry text no filter reads (vLLM's embeddings take messages).
    expectError(await send('/v1/embeddings', { model: 'emb', messages: [{ role: 'user', content: 'forbidden phrase' }], input: 'x' }), 400, 'invalid_request', 'messages');
    expectError(await send('/v1/rerank', { model: 'rr', query: 'q', documents: ['d'], top_n: '2' }), 400, 'invalid_request', 'top_n');
    expectError(await send('/v1/rerank', { model: 'rr', query: 'q', documents: [{ text: 3 }] }), 400, 'invalid_request', 'documents[0].text');
    expectError(await send('/v1/rerank', { model: 'rr', query: 'q', documents: ['d'], return_documents: 'yes' }), 400, 'invalid_request', 'return_documents');
    expectError(await send('/v1/score', { model: 'rr', text_1: ['a', 'b'], text_2: ['c', 'd', 'e'] }), 400, 'invalid_request', 'text_1');
    expectError(await send('/v1/moderations', { input: 'x' }), 400, 'invalid_request', 'model');
    expectError(await send('/v1/rerank', { model: 'rr', query: 'q', documents: [{ text: 'd', title: 'forbidden phrase' }] }), 400, 'invalid_request', 'documents[0].title');
    expectError(await call('POST', `${gw.url}/v1/embeddings`, '{"model":"emb","input":"x","dimensions":1e400}', { 'content-type': 'application/json', ...bearer(alice.key) }), 400, 'invalid_request', 'dimensions');
    expectError(await call('POST', `${gw.url}/v1/embeddings`, '{"model":"emb","input":"x","__proto__":{"input":"y"}}', { 'content-type': 'application/json', ...bearer(alice.key) }), 400, 'invalid_request');
    expectError(await send('/v1/embeddings', { model: 'emb', input: [['nested']] }), 400, 'invalid_request');
    expectError(await send('/v1/embeddings', { model: 'emb', input: [-1] }), 400, 'invalid_request');
    expectError(await send('/v1/embeddings', { model: 'emb', input: 'x', dimensions: 0 }), 400, 'invalid_request', 'dimensions');
    expectError(await send('/v1/moderations', { model: 'mod', input: [{ type: 'text', text: 'x' }] }), 400, 'invalid_request');
    expect(reached()).toBe(before);
  });

  it('refuses a blocked term in any input, query or document, each item read as a message is', async () => {
    const before = reached();
    expectError(await send('/v1/embeddings', { model: 'emb', input: ['fine', 'the Forbidden  Phrase'] }), 400, 'content_filter');
    expectError(await send('/v1/rerank', { model: 'rr', query: 'forbidden phrase', documents: ['d'] }), 400, 'content_filter');
    expectError(await send('/v1/rerank', { model: 'rr', query: 'q', documents: ['d', { text: 'a forbidden phrase' }] }), 400, 'content_filter');
    expectError(await send('/v1/score', { model: 'rr', text_1: 'q', text_2: ['ok', 'forbidden phrase'] }), 400, 'content_filter');
    expectError(await send('/v1/moderations', { model: 'mod', input: 'forbidden phrase' }), 400, 'content_filter');
    // Escaped in the JSON, accented, in a document's text: read as a reader sees it.
    const raw = (body: string) => call('POST', `${gw.url}/v1/rerank`, body, { 'content-type': 'application/json', ...bearer(alice.key) });
    expectError(await raw('{"model":"rr","query":"q","documents":[{"text":"forbidden \\u0070hrase"}]}'), 400, 'content_filter');
    expectError(await send('/v1/embeddings', { model: 'emb', input: ['forbídden phrasé'] }), 400, 'content_filter');
    expect(reached()).toBe(before);
    const blocks = series(parseExposition((await scrape(gw.metrics!.url)).text), 'sluice_content_filter_blocks_total');
    expect(blocks).toMatchObject({ 'endpoint=embeddings': 2, 'endpoint=rerank': 3, 'endpoint=score': 1, 'endpoint=moderations': 1 });
    // Each item is its own text, as each message is: a term split across two items is two harmless texts.
    expect((await send('/v1/embeddings', { model: 'emb', input: ['forbidden', 'phrase'] })).status).toBe(200);
  });

  it('redacts personal data before the backend reads it, in every text field', async () => {
    expect((await send('/v1/embeddings', { model: 'emb', input: ['mail bob@example.com'] })).status).toBe(200);
    expect(JSON.stringify(backend.requests.at(-1)!.body)).not.toContain('bob@example.com');
    expect((await send('/v1/rerank', { model: 'rr', query: 'q', documents: [{ text: 'write to bob@example.com' }] })).status).toBe(200);
    const sent = backend.requests.at(-1)!.body;
    expect(sent.documents[0].text).not.toContain('bob@example.com');
    expect(sent.documents[0].text).toMatch(/^write to \S+$/);
  });

  it('goes on to a fallback model when the backend cannot answer, and refuses a backend answer without its results', async () => {
    const fell = await send('/v1/embeddings', { model: 'emb-dead', input: 'x y' });
    expect(fell.status).toBe(200);
    expect(fell.body.usage.prompt_tokens).toBe(2);
    expect(backend.requests.at(-1)!.body.model).toBe('emb');
    expectError(await send('/v1/embeddings', { model: 'broken', input: 'x' }), 502, 'upstream_error');
    expectError(await send('/v1/rerank', { model: 'broken', query: 'q', documents: ['d'] }), 502, 'upstream_error');
  });

  it('lists each model with the endpoints it serves', async () => {
    const models = (await client.models.list()).data as Array<{ id: string; endpoints?: string[] }>;
    expect(models.find((m) => m.id === 'emb')?.endpoints).toEqual(['embeddings']);
    expect(models.find((m) => m.id === 'rr')?.endpoints).toEqual(['rerank', 'score']);
    expect(models.find((m) => m.id === 'chat-1')?.endpoints).toEqual(['chat', 'images']);
    expect(((await client.models.retrieve('rr')) as { endpoints?: string[] }).endpoints).toEqual(['rerank', 'score']);
  });

  it('answers another method with 405 and Allow: POST', async () => {
    for (const path of ['/v1/embeddings', '/v2/rerank', '/v1/score', '/v2/moderations']) {
      const res = await call('GET', `${gw.url}${path}`, undefined, bearer(alice.key));
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('POST');
    }
  });

  it('records each request with its endpoint, the backend\'s tokens and the price table\'s cost; moderations estimated', async () => {
    const ids = { embeddings: 'in-emb', rerank: 'in-rr', score: 'in-score', moderations: 'in-mod' };
    const headers = (id: string) => ({ ...bearer(alice.key), 'x-request-id': id });
    const embedded = await post(`${gw.url}/v1/embeddings`, { model: 'emb', input: ['a b c', 'd e'] }, headers(ids.embeddings));
    expect(embedded.status).toBe(200);
    expect(embedded.headers['x-sluice-cost']).toBe('0.0000025'); // 5 tokens at $0.5 per million
    expect((await post(`${gw.url}/v1/rerank`, { model: 'rr', query: 'q r', documents: ['x', 'y z'] }, headers(ids.rerank))).status).toBe(200);
    expect((await post(`${gw.url}/v1/score`, { model: 'rr', text_1: 'q', text_2: 'x y' }, headers(ids.score))).status).toBe(200);
    expect((await post(`${gw.url}/v1/moderations`, { model: 'mod', input: 'twelve chars' }, headers(ids.moderations))).status).toBe(200);
    const adminUrl = gw.admin!.url;
    const find = async () => (await exported(adminUrl, adminKey.key, 'jsonl')).filter((r) => Object.values(ids).includes(r.request_id as string));
    await until(async () => (await find()).length === 4, 'the four usage records');
    const byId = new Map((await find()).map((r) => [r.request_id, r]));
    const expected = [
      { id: ids.embeddings, endpoint: 'embeddings', model: 'emb', tokens: 5, estimated: false },
      { id: ids.rerank, endpoint: 'rerank', model: 'rr', tokens: 7, estimated: false },
      { id: ids.score, endpoint: 'score', model: 'rr', tokens: 3, estimated: false },
      // No usage in a moderation answer: 12 characters estimated at 3 tokens, and marked so.
      { id: ids.moderations, endpoint: 'moderations', model: 'mod', tokens: 3, estimated: true },
    ];
    for (const e of expected) {
      expect(byId.get(e.id)).toMatchObject({ endpoint: e.endpoint, model: e.model, status: 200, prompt_tokens: e.tokens, completion_tokens: 0, estimated: e.estimated });
      expect(Math.round((byId.get(e.id)!.cost as number) * 1e9)).toBe(e.tokens * NANOS_PER_TOKEN[e.model]);
    }
    // The metrics count each by endpoint and model, the tokens as prompt tokens (moderations' estimated).
    const samples = parseExposition((await scrape(gw.metrics!.url)).text);
    const requests = series(samples, 'sluice_requests_total');
    for (const [endpoint, model] of [['embeddings', 'emb'], ['rerank', 'rr'], ['score', 'rr'], ['moderations', 'mod']]) {
      expect(requests[`endpoint=${endpoint},model=${model},protocol=chat,reason=,status=200,version=v1`]).toBeGreaterThanOrEqual(1);
    }
    expect(series(samples, 'sluice_tokens_total')['estimated=true,key=alice,model=mod,org=,team=,type=prompt']).toBeGreaterThanOrEqual(3);
  });
});
