// The Responses API client suites' gateway: one model on a chat-only
// backend, translated through chat completions (openai-backend.ts), one on a
// backend that serves /v1/responses itself (responses-backend.ts); both answer
// alike (openai-answers.ts), so a suite runs the same test on each route.
// Keys of two orgs (two of org a), a content filter, and the gateway's own
// response store.
//   describe.each(RESPONSES_ROUTES)('… on a %s backend', (_kind, model) => { … })
import { makeKey, startGateway, type TestGateway } from './gateway';
import { startOpenAIBackend, type OpenAIBackend } from './openai-backend';
import { startResponsesBackend, type ResponsesBackend } from './responses-backend';

export const TRANSLATED_MODEL = 'qwen-chat';
export const NATIVE_MODEL = 'qwen-responses';
/** [kind, model] for describe.each. */
export const RESPONSES_ROUTES: Array<[string, string]> = [['translated (chat-only)', TRANSLATED_MODEL], ['native Responses', NATIVE_MODEL]];
export const BLOCKED_TERM = 'forbidden phrase';

export interface ResponsesStack {
  chat: OpenAIBackend;
  native: ResponsesBackend;
  gw: TestGateway;
  /** The gateway's OpenAI base URL, `<gateway>/v1`. */
  baseURL: string;
  /** Two keys of org a, one of org b. */
  key: string;
  sameOrgKey: string;
  otherOrgKey: string;
  /** The body the backend of `model` got last. */
  lastBody(model: string): any;
  close(): Promise<void>;
}

export async function startResponsesStack(config: Record<string, unknown> = {}): Promise<ResponsesStack> {
  const chat = await startOpenAIBackend();
  const native = await startResponsesBackend();
  const a = makeKey('key-a', { org: 'a' });
  const a2 = makeKey('key-a2', { org: 'a' });
  const b = makeKey('key-b', { org: 'b' });
  const gw = await startGateway({
    keys: [a.entry, a2.entry, b.entry],
    orgs: { a: {}, b: {} },
    upstreams: {
      chat: { url: chat.base, format: 'openai' },
      native: { url: native.base, format: 'openai', apis: ['chat', 'responses'] },
    },
    routes: [{ model: TRANSLATED_MODEL, upstream: 'chat' }, { model: NATIVE_MODEL, upstream: 'native' }],
    plugins: [{ name: 'content-filter', terms: [BLOCKED_TERM] }],
    ...config,
  }).catch(async (err) => { await chat.close(); await native.close(); throw err; });
  return {
    chat, native, gw, baseURL: `${gw.url}/v1`, key: a.key, sameOrgKey: a2.key, otherOrgKey: b.key,
    lastBody: (model) => (model === NATIVE_MODEL ? native.last() : chat.last('/chat/completions').body),
    close: async () => { await gw.close(); await chat.close(); await native.close(); },
  };
}
