// Tools that run only on OpenAI's side (the Codex CLI's web_search) on each
// kind of route: a translated route drops them and says so (x-sluice-dropped,
// sluice_protocol_dropped_total), or, with hostedTools: refuse, answers 400
// naming them; a backend that serves the Responses API gets them as sent.
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';
import { parseExposition, series } from '../support/metrics';
import { startOpenAIBackend, type OpenAIBackend } from '../support/openai-backend';
import { startResponsesBackend, type ResponsesBackend } from '../support/responses-backend';

// As the Codex CLI sends them with a model it has no metadata for.
const execCommand = { type: 'function', name: 'exec_command', description: 'Runs a command.', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] } };
const webSearch = { type: 'web_search', external_web_access: true };
const codexTurn = (model: string) => ({ model, input: 'Find the docs, then list them.', tools: [execCommand, webSearch], include: ['reasoning.encrypted_content'], store: false });

describe('hosted tools on translated and native routes', () => {
  let chat: OpenAIBackend;
  let native: ResponsesBackend;
  let gw: TestGateway;
  const key = makeKey('codex');

  beforeAll(async () => {
    chat = await startOpenAIBackend();
    native = await startResponsesBackend();
    gw = await startGateway({
      keys: [key.entry],
      upstreams: { chat: { url: chat.base, format: 'openai' }, native: { url: native.base, format: 'openai', apis: ['chat', 'responses'] } },
      routes: [
        { model: 'dropping', upstream: 'chat' },
        { model: 'refusing', upstream: 'chat', hostedTools: 'refuse' },
        // A backend that runs them needs no refusal: the setting applies only to a translation.
        { model: 'native', upstream: 'native', hostedTools: 'refuse' },
      ],
    });
  });
  afterAll(async () => { await gw.close(); await chat.close(); await native.close(); });

  const dropped = async (): Promise<Record<string, number>> => series(parseExposition(await gw.gateway.services.metrics!.metrics()), 'sluice_protocol_dropped_total');

  it('drops web_search on a translated route, naming it in x-sluice-dropped and the counter, JSON and streamed', async () => {
    const json = await post(`${gw.url}/v1/responses`, codexTurn('dropping'), bearer(key.key));
    expect(json.status).toBe(200);
    expect(String(json.headers['x-sluice-dropped']).split(', ').sort()).toEqual(['include', 'tools:web_search']);
    expect(json.body.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'exec_command' })]);
    expect(chat.last('/chat/completions').body.tools).toEqual([{ type: 'function', function: { name: 'exec_command', description: 'Runs a command.', parameters: execCommand.parameters, strict: false } }]);
    const streamed = await postSse(`${gw.url}/v1/responses`, { ...codexTurn('dropping'), stream: true }, bearer(key.key));
    expect(streamed.headers['x-sluice-dropped']).toBe(json.headers['x-sluice-dropped']);
    expect(streamed.events.at(-1)!.event).toBe('response.completed');
    expect(await dropped()).toMatchObject({ 'name=tools:web_search,protocol=responses': 2, 'name=include,protocol=responses': 2 });
  });

  it('refuses it on a route with hostedTools: refuse, with a 400 that names it', async () => {
    const before = chat.requests.length;
    const res = await post(`${gw.url}/v1/responses`, codexTurn('refusing'), bearer(key.key));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ reason: 'invalid_request', param: 'tools[1]', type: 'invalid_request_error' });
    expect(res.body.error.message).toContain('web_search');
    expect(chat.requests.length).toBe(before);
  });

  it('relays it as sent to a backend that serves the Responses API', async () => {
    const res = await post(`${gw.url}/v1/responses`, codexTurn('native'), bearer(key.key));
    expect(res.status).toBe(200);
    expect(res.headers['x-sluice-dropped']).toBeUndefined();
    expect(native.last()).toMatchObject({ tools: [execCommand, webSearch], include: ['reasoning.encrypted_content'] });
  });
});
