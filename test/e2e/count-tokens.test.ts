// POST /v1/messages/count_tokens: relayed to a backend that serves the
// Messages API (its own count, its refusals in the Messages API's error
// shape, the text a client sent redacted and filtered as for a message), and
// the gateway's estimate on a route translated to chat, marked as one
// (x-sluice-estimated: true). A count is not usage: no record, no cost.
import { startUsageBackend, COUNTED } from '../support/usage-backend';
import type { RecordingServer } from '../support/json-server';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { admin, makeAdminKey } from '../support/admin';
import { post } from '../support/http';

const body = (model: string, extra: Record<string, unknown> = {}) => ({ model, system: 'a'.repeat(40), messages: [{ role: 'user', content: 'b'.repeat(80) }], ...extra });

describe('count_tokens', () => {
  const user = makeKey('dave', { org: 'acme' });
  const limited = makeKey('erin', { limits: { requests: 1, windowSeconds: 3600 } });
  const adminKey = makeAdminKey();
  let backend: RecordingServer;
  let gw: TestGateway;
  const headers = { 'x-api-key': user.key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'token-counting-2024-11-01' };
  const count = (b: unknown) => post(`${gw.url}/v1/messages/count_tokens`, b, headers);
  const counts = () => backend.requests.filter((r) => r.url.endsWith('/messages/count_tokens'));

  beforeAll(async () => {
    backend = await startUsageBackend();
    gw = await startGateway({
      keys: [user.entry, limited.entry],
      orgs: { acme: {} },
      admin: { keys: [adminKey.digest] },
      upstreams: {
        native: { url: backend.base, format: 'openai', apis: ['chat', 'messages'], headers: { 'x-backend-key': 'k1' } },
        chat: { url: backend.base, format: 'openai' },
      },
      routes: [
        { model: 'claude-native', upstream: 'native', upstreamModel: 'claude-upstream' },
        { model: 'refuse-count', upstream: 'native' },
        { model: 'busy-count', upstream: 'native' },
        { model: 'qwen-chat', upstream: 'chat' },
      ],
      pricing: [{ model: '*', input: 2.5, output: 10 }],
      plugins: [{ name: 'pii', input: 'redact' }, { name: 'content-filter', terms: ['forbidden phrase'] }, { name: 'rate-limit' }],
    }, { admin: true });
  });
  afterAll(async () => { await gw?.close(); await backend?.close(); });

  it('relays to a backend that serves Messages and returns its own count, not an estimate', async () => {
    const res = await count(body('claude-native', { tools: [{ name: 'read', input_schema: { type: 'object' } }] }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ input_tokens: COUNTED });
    expect(res.headers['x-sluice-estimated']).toBeUndefined();
    expect(res.headers['x-sluice-cost']).toBeUndefined();
    const sent = counts().at(-1)!;
    expect(sent.body).toEqual(body('claude-upstream', { tools: [{ name: 'read', input_schema: { type: 'object' } }] }));
    expect(sent.headers).toMatchObject({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'token-counting-2024-11-01', 'x-backend-key': 'k1' });
    expect(sent.headers['x-api-key']).toBeUndefined();
  });

  it('answers the estimate on a route translated to chat, and says so', async () => {
    const before = counts().length;
    const res = await count(body('qwen-chat'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ input_tokens: 30 });
    expect(res.headers['x-sluice-estimated']).toBe('true');
    expect(counts()).toHaveLength(before);
  });

  it.each([
    ['refuse-count', 400, 'invalid_request_error', undefined],
    ['busy-count', 429, 'rate_limit_error', '1'],
  ])('maps the backend\'s refusal of %s as the Messages API maps errors', async (model, status, type, retryAfter) => {
    const res = await count(body(model));
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ type: 'error', error: { type, details: { error_code: 'upstream_rejected' } } });
    expect(res.body.request_id).toBe(res.headers['request-id']);
    expect(res.headers['retry-after']).toBe(retryAfter);
  });

  it('redacts and filters what the backend would read, as for a message', async () => {
    const redacted = await count(body('claude-native', { messages: [{ role: 'user', content: 'mail bob@example.com please' }] }));
    expect(redacted.status).toBe(200);
    expect(JSON.stringify(counts().at(-1)!.body)).not.toContain('bob@example.com');
    const before = counts().length;
    const refused = await count(body('claude-native', { messages: [{ role: 'user', content: 'a forbidden phrase' }] }));
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', details: { error_code: 'content_filter' } } });
    expect(counts()).toHaveLength(before);
  });

  it('takes nothing of a budget: a key allowed one request counts three times, then sends its message', async () => {
    const as = { ...headers, 'x-api-key': limited.key };
    for (let i = 0; i < 3; i++) expect((await post(`${gw.url}/v1/messages/count_tokens`, body('claude-native'), as)).status).toBe(200);
    expect((await post(`${gw.url}/v1/messages`, body('qwen-chat', { max_tokens: 16 }), as)).status).toBe(200);
    expect((await post(`${gw.url}/v1/messages`, body('qwen-chat', { max_tokens: 16 }), as)).status).toBe(429);
  });

  it('is not usage: the usage export holds the message, not the counts', async () => {
    expect((await post(`${gw.url}/v1/messages`, body('qwen-chat', { max_tokens: 16 }), headers)).status).toBe(200);
    const res = await admin(gw.admin!.url, 'GET', '/admin/usage?since=2000-01-01', adminKey.key);
    expect(res.status).toBe(200);
    const records = res.text.trim().split('\n').map((line) => JSON.parse(line));
    expect(records.map((r) => [r.key, r.endpoint, r.status])).toEqual([['erin', 'chat', 200], ['erin', 'chat', 429], ['dave', 'chat', 200]]);
  });
});
