// Output rules stay linear in the answer, timed: a backend streams "hello "
// and then 1,000 deltas of 100 zero-width spaces (text that folds to nothing,
// which a window that kept it would scan again on every delta). Through a
// gateway with output rules the stream takes at most twice what it takes
// through the same gateway without them, and a request made while it
// streams waits no longer than one made while the same stream passes a
// gateway without rules. Medians of three runs each, so one pause of this
// shared machine does not decide; retried for the same reason.
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, call, postSse } from '../support/http';
import { chunk, usageChunk } from '../support/chat-chunks';
import { startChunkBackend, type ChunkBackend } from '../support/chunk-backend';

jest.retryTimes(2, { logErrorsBeforeRetry: true });

const alice = makeKey('alice');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe('output rules on a stream of zero-width spaces, timed', () => {
  let backend: ChunkBackend;
  let withRules: TestGateway;
  let without: TestGateway;

  beforeAll(async () => {
    backend = await startChunkBackend();
    backend.chunks = [chunk({ role: 'assistant', content: 'hello ' }), ...Array.from({ length: 1000 }, () => chunk({ content: '\u200b'.repeat(100) })), chunk({ content: 'project bluebird' }, 'stop'), usageChunk(5, 1000)];
    const config = { keys: [alice.entry], upstreams: { b: { url: backend.base, format: 'openai' } }, routes: [{ model: '*', upstream: 'b' }] };
    withRules = await startGateway({ ...config, plugins: [{ name: 'content-filter', output: { terms: ['project bluebird', 'secret plan'] } }] });
    without = await startGateway({ ...config, plugins: [{ name: 'content-filter' }] });
  });
  afterAll(async () => {
    await withRules.close();
    await without.close();
    await backend.close();
  });

  /** The stream's time through `gw`, and the slowest of the model lists asked for while it streamed. */
  async function run(gw: TestGateway): Promise<{ streamMs: number; listMs: number; text: string }> {
    let streaming = true;
    const lists: number[] = [];
    const ask = (async () => {
      while (streaming) {
        const t = performance.now();
        const res = await call('GET', `${gw.url}/v1/models`, undefined, bearer(alice.key));
        expect(res.status).toBe(200);
        lists.push(performance.now() - t);
      }
    })();
    const t0 = performance.now();
    const res = await postSse(`${gw.url}/v1/chat/completions`, { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key));
    const streamMs = performance.now() - t0;
    streaming = false;
    await ask;
    expect(res.status).toBe(200);
    const text = res.events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data).choices[0]?.delta?.content ?? '').join('');
    return { streamMs, listMs: Math.max(...lists), text };
  }

  it('takes at most twice the time without rules, and holds no other request up', async () => {
    await run(without);
    await run(withRules); // warm both
    const on: Array<{ streamMs: number; listMs: number }> = [];
    const off: Array<{ streamMs: number; listMs: number }> = [];
    for (let i = 0; i < 3; i++) {
      const r = await run(withRules);
      expect(r.text).toBe(`hello ${'\u200b'.repeat(100_000)}`);
      on.push(r);
      const plain = await run(without);
      expect(plain.text).toBe(`hello ${'\u200b'.repeat(100_000)}project bluebird`);
      off.push(plain);
    }
    const streamRatio = median(on.map((r) => r.streamMs)) / median(off.map((r) => r.streamMs));
    const listRatio = median(on.map((r) => r.listMs)) / median(off.map((r) => r.listMs));
    console.log(`zero-width stream: ${median(on.map((r) => r.streamMs)).toFixed(1)} ms with rules, ${median(off.map((r) => r.streamMs)).toFixed(1)} without (${streamRatio.toFixed(2)}x); slowest concurrent request ${median(on.map((r) => r.listMs)).toFixed(1)} / ${median(off.map((r) => r.listMs)).toFixed(1)} ms (${listRatio.toFixed(2)}x)`);
    expect(streamRatio).toBeLessThanOrEqual(2);
    expect(listRatio).toBeLessThanOrEqual(2);
  });
});
