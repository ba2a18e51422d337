// The scripted agent backend (agent-backend.ts) behind one gateway, as the
// Messages API client suites use it: model TRANSLATED goes to it as a chat
// completions server (the request translated, the answer translated back),
// model NATIVE to the same server as one that serves Messages itself (relayed
// as sent, model renamed). Both send the backend AGENT_MODEL, so a test runs
// the same script either way and expects the same answer.
// Usage:
//   const stack = await startMessagesStack({ command: 'true', readPath, thinking: 'Hmm.' });
//   new Anthropic({ baseURL: stack.gw.url, apiKey: stack.key });
import { AGENT_MODEL, startAgentBackend, type AgentBackend, type AgentBackendOptions } from './agent-backend';
import type { AgentScript } from './agent-script';
import { makeKey, startGateway, type TestGateway } from './gateway';

type GatewayOptions = NonNullable<Parameters<typeof startGateway>[1]>;

export interface MessagesStackOptions {
  /** More config (or made from the backend): keys and routes (tried first) are added to the stack's, upstreams merged, anything else set. */
  config?: Record<string, any> | ((backend: AgentBackend) => Record<string, any>);
  backend?: AgentBackendOptions;
  gateway?: GatewayOptions;
}

export const TRANSLATED = 'qwen-agent';
export const NATIVE = 'claude-agent';
export const MODES = [['translated', TRANSLATED], ['native', NATIVE]] as const;

export interface MessagesStack {
  backend: AgentBackend;
  gw: TestGateway;
  key: string;
  close(): Promise<void>;
}

export async function startMessagesStack(script: AgentScript, options: MessagesStackOptions = {}): Promise<MessagesStack> {
  const backend = await startAgentBackend(script, options.backend);
  const key = makeKey('agent-user');
  const extra = typeof options.config === 'function' ? options.config(backend) : options.config;
  const { keys = [], upstreams = {}, routes = [], ...config } = extra ?? {};
  let gw: TestGateway;
  try {
    gw = await startGateway({
      ...config,
      keys: [key.entry, ...keys],
      upstreams: {
        chat: { url: backend.base, format: 'openai' },
        messages: { url: backend.base, format: 'openai', apis: ['chat', 'messages'] },
        ...upstreams,
      },
      routes: [
        ...routes,
        { model: TRANSLATED, upstream: 'chat', upstreamModel: AGENT_MODEL },
        { model: NATIVE, upstream: 'messages', upstreamModel: AGENT_MODEL },
      ],
    }, options.gateway);
  } catch (err) {
    await backend.close();
    throw err;
  }
  return { backend, gw, key: key.key, close: async () => { await gw.close(); await backend.close(); } };
}
