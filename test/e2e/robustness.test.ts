// Failure modes found in review, end to end: a plugin whose head hook throws,
// reloads that must not pile up, always-on limits ahead of the rate limit, and
// a backend that keeps its stream open after [DONE].
import { z } from 'zod';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';
import type { PluginDefinition } from '../../src/contract/plugin';

const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

const throwsInHead: PluginDefinition<Record<string, never>> = {
  name: 'throws-in-head',
  schema: z.strictObject({}),
  create: () => ({ onResponseHead() { throw new Error('plugin bug'); } }),
};

describe('robustness', () => {
  let backend: Backend;
  const key = makeKey('k');
  beforeAll(async () => { backend = await startBackend({ format: 'openai', events: 3, gapMs: 5 }); });
  afterAll(async () => { await backend.close(); });

  const config = (plugins: unknown[], extra: Record<string, unknown> = {}) => ({
    keys: [key.entry],
    upstreams: { b: { url: backend.base, format: 'openai', timeoutMs: 3000 } },
    routes: [{ model: '*', upstream: 'b' }],
    plugins,
    ...extra,
  });

  it('a head hook that throws breaks neither the answer nor the process', async () => {
    const gw = await startGateway(config([{ name: 'throws-in-head' }]), { plugins: [throwsInHead] });
    try {
      const ok = await post(`${gw.url}/v1/chat/completions`, chat('ok-1'), bearer(key.key));
      expect(ok.status).toBe(200);
      expect(ok.body.object).toBe('chat.completion');
      const refused = await post(`${gw.url}/v1/chat/completions`, chat('ok-1'), bearer('sk-wrong'));
      expect(refused.status).toBe(401);
      expect(refused.body.error.reason).toBe('unauthorized');
      const stream = await postSse(`${gw.url}/v1/chat/completions`, chat('ok-2', { stream: true }), bearer(key.key));
      expect(stream.events.at(-1)?.data).toBe('[DONE]');
    } finally {
      await gw.close();
    }
  });

  it('reloading many times does not pile listeners (or old configs) onto the server', async () => {
    const gw = await startGateway(config([]));
    try {
      const before = gw.server.listenerCount('close');
      for (let i = 0; i < 12; i++) {
        await gw.gateway.swap({ config: gw.gateway.state.runtime.config, file: gw.gateway.state.runtime.file });
        expect((await post(`${gw.url}/v1/chat/completions`, chat('ok-1'), bearer(key.key))).status).toBe(200);
      }
      expect(gw.server.listenerCount('close')).toBe(before);
    } finally {
      await gw.close();
    }
  });

  it('runs the always-on limits before the rate limit, so a refused request costs no budget', async () => {
    const limited = makeKey('limited', { limits: { requests: 2, windowSeconds: 60 } });
    const gw = await startGateway({ ...config([{ name: 'rate-limit' }]), keys: [limited.entry] });
    try {
      for (let i = 0; i < 2; i++) {
        const tooMany = await post(`${gw.url}/v1/chat/completions`, chat('ok-1', { n: 11 }), bearer(limited.key));
        expect(tooMany.body.error).toMatchObject({ reason: 'invalid_request', param: 'model_params.n' });
      }
      expect((await post(`${gw.url}/v1/chat/completions`, chat('ok-1'), bearer(limited.key))).status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('ends the client stream at [DONE] even when the backend keeps its side open', async () => {
    const gw = await startGateway(config([]));
    try {
      const started = Date.now();
      const stream = await postSse(`${gw.url}/v1/chat/completions`, chat('linger-1', { stream: true }), bearer(key.key));
      expect(Date.now() - started).toBeLessThan(1000); // not the 3 s upstream timeout
      expect(stream.events.at(-1)?.data).toBe('[DONE]');
      expect(stream.events.some((e) => e.data.includes('"error"'))).toBe(false);
    } finally {
      await gw.close();
    }
  });
});
