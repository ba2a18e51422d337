// Declared order and what policy plugins get: stages decide the order (a
// validate plugin refuses before an admit plugin spends anything, whatever
// the config's order), per-plugin typed state, onEvent on an event parsed once
// for every plugin, a last event before [DONE], and JSON answers through
// onResponseBody.
import { z } from 'zod';
import type { PluginDefinition } from '../../src';
import { startBackend, type Backend } from '../support/backends';
import { makeKey, startGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';

interface Count { events: number }
const masked: unknown[] = [];

/** A third-party output policy: masks a word in answers, counts events, and signs off each stream. */
const mask: PluginDefinition<{ word: string }, Count> = {
  name: 'mask',
  stage: 'observe',
  schema: z.strictObject({ word: z.string() }),
  create: ({ word }) => ({
    state: () => ({ events: 0 }),
    onEvent(_ctx, event, state) {
      state.events++;
      masked.push(event.json);
      return event.data.includes(word) ? event.data.split(word).join('***') : undefined;
    },
    onStreamEnd: (_ctx, state) => ({ object: 'mask.summary', events: state.events }),
    onResponseBody(_ctx, body) {
      return JSON.parse(JSON.stringify(body).split(word).join('***'));
    },
  }),
};

/** Reads each event's JSON too: it must be the very object the mask plugin saw. */
const peeks: unknown[] = [];
const peek: PluginDefinition<Record<string, never>> = {
  name: 'peek',
  stage: 'observe',
  schema: z.strictObject({}),
  create: () => ({ onEvent(_ctx, event) { peeks.push(event.json); return undefined; } }),
};

describe('plugin stages, state and output hooks', () => {
  let backend: Backend;
  const alice = makeKey('alice', { limits: { requests: 2, windowSeconds: 60 } });

  beforeAll(async () => { backend = await startBackend({ format: 'openai', events: 3, gapMs: 0 }); });
  afterAll(() => backend.close());

  it('refuses with limits (validate) before rate-limit (admit) spends the budget, whatever the config order', async () => {
    const gw = await startGateway({
      keys: [alice.entry], upstreams: { b: { url: backend.base } }, routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'rate-limit' }, { name: 'limits' }],
    });
    try {
      const send = (n: number) => post(`${gw.url}/v1/chat/completions`, { model: 'ok-a', n, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
      const statuses = [];
      for (const n of [11, 11, 1, 1, 1]) statuses.push((await send(n)).status);
      expect(statuses).toEqual([400, 400, 200, 200, 429]);
    } finally {
      await gw.close();
    }
  });

  it('gives each plugin its own state, one parsed event for all, a last event before [DONE], and JSON answers to rewrite', async () => {
    const bob = makeKey('bob');
    const gw = await startGateway({
      keys: [bob.entry], upstreams: { b: { url: backend.base } }, routes: [{ model: '*', upstream: 'b' }],
      plugins: [{ name: 'peek' }, { name: 'mask', word: 'beta' }],
    }, { plugins: [mask, peek] });
    try {
      const json = await post(`${gw.url}/v1/chat/completions`, { model: 'ok-a', messages: [{ role: 'user', content: 'hi' }] }, bearer(bob.key));
      expect(json.body.choices[0].message.content).toBe('alpha *** gamma');
      for (let run = 0; run < 2; run++) {
        peeks.length = 0;
        masked.length = 0;
        const res = await postSse(`${gw.url}/v1/chat/completions`, { model: 'ok-a', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(bob.key));
        const data = res.events.map((e) => e.data);
        expect(data.at(-1)).toBe('[DONE]');
        // 3 content chunks and the last chunk passed onEvent; the summary counts this request's only.
        expect(JSON.parse(data.at(-2)!)).toEqual({ object: 'mask.summary', events: 4 });
        expect(res.raw).toContain('***');
        expect(res.raw).not.toContain('beta');
        expect(peeks).toHaveLength(4);
        // Parsed once: both plugins were handed the very same object.
        peeks.forEach((p, i) => expect(masked[i]).toBe(p));
        expect((peeks[0] as { object: string }).object).toBe('chat.completion.chunk');
      }
    } finally {
      await gw.close();
    }
  });
});
