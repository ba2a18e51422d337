// Every name a client makes up is hostile in a header: a Messages or
// Responses request translated for a chat backend names what it left out in
// x-sluice-dropped, and a metadata key, a hosted tool's name or a field of
// the client's own that is non-ASCII, holds CR/LF, markup or 5,000
// characters is percent-encoded and clipped there, JSON and streamed, never
// a 500, a second header or a header longer than 1 KB.
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse, type JsonResponse } from '../support/http';
import { startOpenAIBackend, type OpenAIBackend } from '../support/openai-backend';

const HOSTILE = ['☃', 'ws\r\nX-Injected: 1', '<script>alert(1)</script>', 'x'.repeat(5000), 'a, b', '\ud800'];
/** What a header value may hold: printable ASCII, names separated by ", ". */
const HEADER_TEXT = /^[A-Za-z0-9._:~%-]+(, [A-Za-z0-9._:~%-]+)*$/;

const messagesBody = (name: string) => ({
  model: 'chat-model', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }],
  metadata: { user_id: 'u1', [name]: 'v' },
  tools: [{ type: 'web_search_20250305', name: name.slice(0, 256) }, { name: 'lookup', input_schema: { type: 'object' }, [name]: true }],
  output_config: { [name]: 1 },
  [name]: 'top level',
});

const responsesBody = (name: string) => ({
  model: 'chat-model', input: 'hello', metadata: { [name]: 'v' },
  tools: [{ type: name, name }, { type: 'web_search', name }],
});

describe('names a client made up, in x-sluice-dropped', () => {
  let backend: OpenAIBackend;
  let gw: TestGateway;
  const key = makeKey('names');

  beforeAll(async () => {
    backend = await startOpenAIBackend();
    gw = await startGateway({ keys: [key.entry], upstreams: { chat: { url: backend.base, format: 'openai' } }, routes: [{ model: 'chat-model', upstream: 'chat' }] });
  });
  afterAll(async () => { await gw.close(); await backend.close(); });

  const checkHeader = (res: JsonResponse | { status: number; headers: JsonResponse['headers'] }, name: string): string => {
    expect([name.slice(0, 20), res.status]).toEqual([name.slice(0, 20), 200]);
    const header = String(res.headers['x-sluice-dropped']);
    expect(header).toMatch(HEADER_TEXT);
    expect(header.length).toBeLessThanOrEqual(1024);
    expect(res.headers['x-injected']).toBeUndefined();
    return header;
  };

  it.each(HOSTILE.map((n) => [JSON.stringify(n.slice(0, 30)), n]))('Messages: %s is encoded, JSON and streamed', async (_label, name) => {
    const json = await post(`${gw.url}/v1/messages`, messagesBody(name), bearer(key.key));
    const header = checkHeader(json, name);
    expect(json.body.type).toBe('message');
    const streamed = await postSse(`${gw.url}/v1/messages`, { ...messagesBody(name), stream: true }, bearer(key.key));
    expect(checkHeader(streamed, name)).toBe(header);
    expect(streamed.events.at(-1)!.event).toBe('message_stop');
  });

  it('Messages: a name is shown percent-encoded, clipped to 64 characters', async () => {
    const header = checkHeader(await post(`${gw.url}/v1/messages`, messagesBody('☃'), bearer(key.key)), '☃');
    expect(header.split(', ')).toEqual(expect.arrayContaining(['metadata.%E2%98%83', 'tools.%E2%98%83', '%E2%98%83', 'output_config.%E2%98%83']));
    const long = checkHeader(await post(`${gw.url}/v1/messages`, messagesBody('x'.repeat(5000)), bearer(key.key)), 'long');
    expect(long.split(', ')).toEqual(expect.arrayContaining([`metadata.${'x'.repeat(55)}`, 'x'.repeat(64)]));
    const crlf = checkHeader(await post(`${gw.url}/v1/messages`, messagesBody('ws\r\nX: 1'), bearer(key.key)), 'crlf');
    expect(crlf.split(', ')).toContain('tools.ws%0D%0AX:%201');
  });

  it.each(HOSTILE.map((n) => [JSON.stringify(n.slice(0, 30)), n]))('Responses: %s is summarised, JSON and streamed', async (_label, name) => {
    const json = await post(`${gw.url}/v1/responses`, responsesBody(name), bearer(key.key));
    expect(json.status).toBeLessThan(500);
    if (json.status === 200) checkHeader(json, name);
    else expect(json.body.error.reason).toBe('invalid_request');
    const streamed = await postSse(`${gw.url}/v1/responses`, { ...responsesBody(name), stream: true }, bearer(key.key));
    expect(streamed.status).toBe(json.status);
    if (streamed.status === 200) checkHeader(streamed, name);
  });
});
