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

export const TRANSLATED = 'qwen-agent';
export const NATIVE = 'claude-agent';
export const MODES = [['translated', TRANSLATED], ['native', NATIVE]] as const;

export interface MessagesStack {
  backend: AgentBackend;
  gw: TestGateway;
  key: string;
  close(): Promise<void>;
}

/** `config`: more of the gateway's config (plugins, server), merged over the stack's. */
export async function startMessagesStack(script: AgentScript, config: Record<string, unknown> = {}, options: AgentBackendOptions = {}): Promise<MessagesStack> {
  const backend = await startAgentBackend(script, options);
  const key = makeKey('agent-user');
  let gw: TestGateway;
  try {
    gw = await startGateway({
      keys: [key.entry],
      upstreams: {
        chat: { url: backend.base, format: 'openai' },
        messages: { url: backend.base, format: 'openai', apis: ['chat', 'messages'] },
      },
      routes: [
        { model: TRANSLATED, upstream: 'chat', upstreamModel: AGENT_MODEL },
        { model: NATIVE, upstream: 'messages', upstreamModel: AGENT_MODEL },
      ],
      ...config,
    });
  } catch (err) {
    await backend.close();
    throw err;
  }
  return { backend, gw, key: key.key, close: async () => { await gw.close(); await backend.close(); } };
}
