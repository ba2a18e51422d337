// One OpenAI-compatible backend behind one gateway, as the client-library
// suites (test/e2e/clients/) use it: an exact route for `qwen-chat`, a `*`
// route for every other id (gpt-5-mini, o3-mini, busy-*, b64only-*), both in
// the openai dialect, a content filter, a key for everything and a key
// allowed only `qwen-chat`.
import { makeKey, startGateway, type TestGateway } from './gateway';
import { startOpenAIBackend, type OpenAIBackend } from './openai-backend';

/** The content filter's term: any message carrying it is refused. */
export const FORBIDDEN = 'forbidden phrase';
export const ROUTED_MODEL = 'qwen-chat';

export interface ClientStack {
  backend: OpenAIBackend;
  gw: TestGateway;
  /** The gateway's OpenAI base URL, `<gateway>/v1`. */
  baseURL: string;
  key: string;
  /** A key whose allow-list holds only ROUTED_MODEL. */
  limitedKey: string;
  close(): Promise<void>;
}

export async function startClientStack(): Promise<ClientStack> {
  const backend = await startOpenAIBackend();
  const all = makeKey('all-models');
  const limited = makeKey('qwen-only', { models: [ROUTED_MODEL] });
  let gw: TestGateway;
  try {
    gw = await startGateway({
      keys: [all.entry, limited.entry],
      upstreams: { b: { url: backend.base, format: 'openai' } },
      routes: [
        { model: ROUTED_MODEL, upstream: 'b', dialect: 'openai' },
        { model: '*', upstream: 'b', dialect: 'openai' },
      ],
      plugins: [{ name: 'content-filter', terms: [FORBIDDEN] }],
    });
  } catch (err) {
    await backend.close();
    throw err;
  }
  return {
    backend,
    gw,
    baseURL: `${gw.url}/v1`,
    key: all.key,
    limitedKey: limited.key,
    close: async () => { await gw.close(); await backend.close(); },
  };
}
