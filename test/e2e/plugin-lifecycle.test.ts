// The plugin contract's promises, each a regression test: nothing after the
// client left, onFinish once and after every started onRequest settled, hooks
// checked at load (unknown names, async where sync is required), and every
// hook failure logged with its plugin's name and the request id.
import { request } from 'node:http';
import pino from 'pino';
import { z } from 'zod';
import type { PluginDefinition, PluginHooks } from '../../src';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';
import { expectError } from '../support/errors';
import { until } from '../support/wait';

const plugin = (name: string, hooks: () => PluginHooks): PluginDefinition => ({ name, schema: z.object({}), create: hooks });

describe('plugin lifecycle', () => {
  let backend: Backend;
  const alice = makeKey('alice');
  const lines: any[] = [];
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  const base = () => ({ keys: [alice.entry], upstreams: { b: { url: backend.base } }, routes: [{ model: '*', upstream: 'b' }] });

  beforeAll(async () => { backend = await startBackend({ format: 'openai', events: 2, gapMs: 0 }); });
  afterAll(() => backend.close());

  it('runs no onRequest after the client left, and onFinish once, after the onRequest in flight settled', async () => {
    const order: string[] = [];
    let started = (): void => undefined;
    const hookStarted = new Promise<void>((resolve) => { started = resolve; });
    // The hook holds the request until the gateway has seen the client leave (its signal aborts then), so the
    // next hook would start after the close: the case under test, reached by events, never by a guess of time.
    const slow = plugin('slow', () => ({
      async onRequest(ctx) {
        order.push('slow.onRequest start');
        started();
        await new Promise((resolve) => { if (ctx.signal.aborted) resolve(undefined); else ctx.signal.addEventListener('abort', resolve, { once: true }); });
        order.push('slow.onRequest end');
      },
      onFinish() { order.push('slow.onFinish'); },
    }));
    const later = plugin('later', () => ({ onRequest() { order.push('later.onRequest'); }, onFinish() { order.push('later.onFinish'); } }));
    const gw = await startGateway({ ...base(), plugins: [{ name: 'slow' }, { name: 'later' }] }, { plugins: [slow, later] });
    try {
      const before = backend.requests.length;
      const body = JSON.stringify({ model: 'ok-a', messages: [{ role: 'user', content: 'hi' }] });
      const req = request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...bearer(alice.key), 'content-type': 'application/json', 'content-length': String(body.length) } });
      req.on('error', () => undefined);
      req.end(body);
      await hookStarted;
      req.destroy();
      await until(() => order.length >= 4, 'both finish hooks', 2000);
      expect(order).toEqual(['slow.onRequest start', 'slow.onRequest end', 'slow.onFinish', 'later.onFinish']);
      expect(backend.requests.length).toBe(before);
    } finally {
      await gw.close();
    }
  });

  it('refuses at load an async onEvent, onResponseHead or outputRules, saying why', async () => {
    for (const hook of ['onEvent', 'onResponseHead', 'outputRules']) {
      const bad = plugin('bad-async', () => ({ [hook]: async () => undefined }));
      await expect(startGateway({ ...base(), plugins: [{ name: 'bad-async' }] }, { plugins: [bad] }))
        .rejects.toThrow(new RegExp(`plugin "bad-async": hook "${hook}" is async, but it must be synchronous`));
    }
  });

  it('refuses at load a class plugin with a misspelled hook, naming the plugin', async () => {
    class Typo { onRequst(): void { /* never called */ } }
    const bad = plugin('typo', () => new Typo() as unknown as PluginHooks);
    await expect(startGateway({ ...base(), plugins: [{ name: 'typo' }] }, { plugins: [bad] })).rejects.toThrow(/plugin "typo" has an unknown hook "onRequst"/);
    class Fine { private helper(): number { return 1; } onRequest(): void { this.helper(); } }
    const ok = await startGateway({ ...base(), plugins: [{ name: 'fine' }] }, { plugins: [plugin('fine', () => new Fine() as unknown as PluginHooks)] });
    await ok.close();
  });

  it('keeps an event whose onEvent returned a promise, and logs every hook failure with the plugin and request id', async () => {
    const sneaky = plugin('sneaky', () => ({
      onEvent: () => Promise.resolve('x') as unknown as string,
      onFinish() { throw new Error('finish broke'); },
      close() { throw new Error('close broke'); },
    }));
    const broken = plugin('broken', () => ({ onRequest(ctx) { if ((ctx.chat?.messages[0].content as string) === 'boom') throw new Error('request broke'); } }));
    const gw = await startGateway({ ...base(), plugins: [{ name: 'sneaky' }, { name: 'broken' }] }, { plugins: [sneaky, broken], logger });
    const res = await postSse(`${gw.url}/v1/chat/completions`, { model: 'ok-a', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { ...bearer(alice.key), 'x-request-id': 'life-1' });
    expect(res.raw).not.toContain('[object Promise]');
    expect(res.events.at(-1)!.data).toBe('[DONE]');
    const failed = await post(`${gw.url}/v1/chat/completions`, { model: 'ok-a', messages: [{ role: 'user', content: 'boom' }] }, { ...bearer(alice.key), 'x-request-id': 'life-2' });
    expectError(failed, 500, 'internal_error', null);
    await gw.close();
    const failures = lines.filter((l) => l.msg === 'plugin hook failed').map((l) => `${l.requestId} ${l.plugin} ${l.hook}`);
    expect(failures).toEqual(expect.arrayContaining(['life-1 sneaky onEvent', 'life-1 sneaky onFinish', 'life-2 broken onRequest']));
    expect(lines.some((l) => l.msg === 'plugin close failed' && l.plugin === 'sneaky')).toBe(true);
  });
});
