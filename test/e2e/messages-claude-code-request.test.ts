// What Claude Code sends today works: its captured requests (test/fixtures/
// claude-code-messages-request*.json: system messages between turns, adaptive
// thinking shown as it asks, context management, output config, cache
// breakpoints, deferred tools, a 128k cap), sent through the gateway with its
// headers, on a backend that serves Messages and on one the request is
// translated for. Native: the backend gets the body as sent, model renamed,
// with anthropic-version and anthropic-beta. Translated: what a chat backend
// cannot use is named in x-sluice-dropped, logged and counted.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { AGENT_MODEL } from '../support/agent-backend';
import { FIXTURES } from '../support/agent-fixtures';
import { postSse } from '../support/http';
import { parseExposition, scrape, series } from '../support/metrics';
import { NATIVE, TRANSLATED, startMessagesStack, type MessagesStack } from '../support/messages-stack';

const read = (file: string) => JSON.parse(readFileSync(join(FIXTURES, file), 'utf8'));
const HEADERS: Record<string, string> = read('claude-code-messages-headers.json').headers;
const TURNS = ['claude-code-messages-request.json', 'claude-code-messages-request-turn2.json'];
/** What a chat backend cannot use in each captured request. */
const DROPPED = ['cache_control', 'tools.defer_loading', 'thinking.display', 'context_management'];

describe('Claude Code\'s captured requests through the gateway', () => {
  let stack: MessagesStack;
  const lines: string[] = [];

  beforeAll(async () => {
    stack = await startMessagesStack({ command: 'true', readPath: '/work/project/secret.txt' }, {
      config: { plugins: [{ name: 'metrics' }] },
      gateway: { metrics: {}, logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }) },
    });
  });
  afterAll(() => stack?.close());

  /** The fixture as Claude Code sends it, to the route `model`, with Claude Code's headers and a gateway key. */
  async function send(file: string, model: string) {
    const headers = { 'anthropic-version': HEADERS['anthropic-version'], 'anthropic-beta': HEADERS['anthropic-beta'], 'x-app': 'cli', 'x-api-key': stack.key };
    const res = await postSse(`${stack.gw.url}/v1/messages?beta=true`, { ...read(file), model }, headers);
    expect(res.status).toBe(200);
    const events = res.events.map((e) => e.event);
    expect(events[0]).toBe('message_start');
    expect(events.at(-1)).toBe('message_stop');
    expect(events).not.toContain('error');
    return res;
  }

  it.each(TURNS)('on a native backend, %s arrives as sent, model renamed, with anthropic-version and anthropic-beta', async (file) => {
    const res = await send(file, NATIVE);
    expect(res.headers['x-sluice-dropped']).toBeUndefined();
    const got = stack.backend.requests.at(-1)!;
    expect(got.url).toBe('/v1/messages');
    expect(got.body).toEqual({ ...read(file), model: AGENT_MODEL });
    expect(got.headers).toMatchObject({ 'anthropic-version': HEADERS['anthropic-version'], 'anthropic-beta': HEADERS['anthropic-beta'] });
    expect(JSON.parse(res.events[0].data).message.model).toBe(NATIVE);
  });

  it.each(TURNS)('on a translated backend, %s is answered, and what chat cannot use is named, logged and counted', async (file) => {
    const before = series(parseExposition((await scrape(stack.gw.metrics!.url)).text), 'sluice_protocol_dropped_total');
    const res = await send(file, TRANSLATED);
    expect(String(res.headers['x-sluice-dropped']).split(', ').sort()).toEqual([...DROPPED].sort());
    const chat = stack.backend.requests.at(-1)!;
    const sent = read(file);
    expect(chat.url).toBe('/v1/chat/completions');
    expect(chat.body).toMatchObject({ model: AGENT_MODEL, stream: true, max_tokens: sent.max_tokens, reasoning_effort: 'medium', chat_template_kwargs: { enable_thinking: true }, user: sent.metadata.user_id });
    expect(chat.body.tools.map((t: any) => t.function.name)).toEqual(sent.tools.map((t: any) => t.name));
    // The system prompt first, and the system message between turns where Claude Code put it.
    expect(chat.body.messages.map((m: any) => m.role)).toEqual(['system', ...sent.messages.flatMap((m: any) => (m.content.some?.((b: any) => b.type === 'tool_result') ? ['tool'] : [m.role]))]);
    expect(chat.headers['anthropic-version']).toBeUndefined();
    const after = series(parseExposition((await scrape(stack.gw.metrics!.url)).text), 'sluice_protocol_dropped_total');
    for (const name of DROPPED) expect(after[`name=${name},protocol=messages`] - (before[`name=${name},protocol=messages`] ?? 0)).toBe(1);
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.requestId === res.headers['request-id'] && l.dropped !== undefined);
    expect(logged).toMatchObject({ protocol: 'messages', dropped: expect.arrayContaining(DROPPED) });
  });
});
