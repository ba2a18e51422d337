// picker: scored against simulated model servers (test/support/engine-sim.ts)
// with real queues and a vLLM-style /metrics: a saturated endpoint gets no new
// requests until it drains; with metrics failing, hanging or stale the picker
// falls back to requests in flight and no request waits on a scrape; a
// conversation keeps going to the endpoint that holds its prefix; and the
// prefix index stays within its bound however many prompts pass.
import { request, type ClientRequest } from 'node:http';
import { startEngineSim, type EngineSim, type EngineSimOptions } from '../support/engine-sim';
import { makeKey, startGateway, type TestGateway } from '../support/gateway';
import { bearer, post, postSse } from '../support/http';
import { parseExposition, promtoolCheck, scrape, series } from '../support/metrics';
import { until } from '../support/wait';
import { validateConfig } from '../../src/config/load';

const alice = makeKey('alice');

async function fleetBehind(sims: EngineSim[], extra: Record<string, unknown> = {}): Promise<TestGateway> {
  return startGateway({
    keys: [alice.entry],
    upstreams: { sim: { endpoints: sims.map((s) => ({ url: s.base })), picker: 'scored', engineMetrics: { flavour: 'vllm', intervalMs: 50, staleAfterMs: 200, timeoutMs: 100 }, ...extra } },
    routes: [{ model: '*', upstream: 'sim' }],
  }, { metrics: {} });
}

const samplesOf = async (gw: TestGateway) => parseExposition((await scrape(gw.metrics!.url)).text);
const gauge = async (gw: TestGateway, name: string) => series(await samplesOf(gw), name);
const requestsSeen = (sims: EngineSim[]) => sims.map((s) => s.stats.requests);

/** Streams straight at a simulated engine (not through the gateway), to fill its queue; destroy() to leave. */
function occupy(sim: EngineSim, n: number): ClientRequest[] {
  return Array.from({ length: n }, (_, i) => {
    const req = request(`${sim.base}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => res.resume());
    req.on('error', () => undefined);
    req.end(JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: `hold ${i}` }] }));
    return req;
  });
}

describe('scored picker on simulated engines', () => {
  const sims: EngineSim[] = [];
  let gw: TestGateway;
  const chat = (content: string) => post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content }] }, bearer(alice.key));
  const chatStream = (content: string) => postSse(`${gw.url}/v1/chat/completions`, { model: 'm', stream: true, messages: [{ role: 'user', content }] }, bearer(alice.key));

  beforeAll(async () => {
    const slow: EngineSimOptions = { slots: 1, outputTokens: 12, tokensPerEvent: 4, decodeMsPerToken: 25 };
    sims.push(await startEngineSim(slow), await startEngineSim({ slots: 4 }), await startEngineSim({ slots: 4 }));
    gw = await fleetBehind(sims);
    await until(async () => Object.values(await gauge(gw, 'sluice_engine_metrics_fresh')).filter((v) => v === 1).length === 3, 'a fresh reading of every engine');
  });
  afterAll(async () => { await gw.close(); await Promise.all(sims.map((s) => s.close())); });

  it('avoids an endpoint whose queue is over the threshold though it holds the prefix, and sends to it again once it drains', async () => {
    // A long prompt that landed on the first engine: its prefix pulls its follow-ups there.
    let prompt = '';
    await until(async () => {
      const before = sims[0].stats.requests;
      prompt = `Shared context ${Date.now()} ${'lorem ipsum '.repeat(100)}`;
      expect((await chat(prompt)).status).toBe(200);
      return sims[0].stats.requests > before;
    }, 'a prompt on the first engine');
    const held = occupy(sims[0], 8); // one slot: 1 running, 7 waiting
    await until(async () => (await gauge(gw, 'sluice_engine_queue'))[`endpoint=${sims[0].base},upstream=sim`] >= 6, 'the gateway to see the queue');
    const before = requestsSeen(sims);
    for (let i = 0; i < 12; i++) expect((await chat(`${prompt} question ${i}`)).status).toBe(200);
    const after = requestsSeen(sims);
    expect(after[0] - before[0]).toBe(0);
    expect(after[1] - before[1] + after[2] - before[2]).toBe(12);

    for (const r of held) r.destroy();
    await until(() => sims[0].waiting() === 0 && sims[0].running() === 0, 'the engine to drain');
    await until(async () => (await gauge(gw, 'sluice_engine_queue'))[`endpoint=${sims[0].base},upstream=sim`] === 0, 'the gateway to see it drained');
    await until(async () => { await chat(`again ${Date.now()}`); return sims[0].stats.requests > after[0]; }, 'a request on the drained endpoint');
  });

  it('falls back to requests in flight when metrics fail, hang or go stale, and never makes a request wait on a scrape', async () => {
    const decisions = async () => (await gauge(gw, 'sluice_picker_decisions_total'))['reason=no_metrics,upstream=sim'];
    for (const [mode, i] of [['fail', 0], ['hang', 1], ['fail', 2]] as const) sims[i].setMetrics(mode);
    await until(async () => Object.values(await gauge(gw, 'sluice_engine_metrics_fresh')).every((v) => v === 0), 'every reading to go stale');
    const fallbacks = await decisions();
    const before = requestsSeen(sims);
    // The same prompt nine times at once: by in-flight counts they spread evenly (prefix affinity would pile them up).
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 9 }, () => chatStream('the same prompt')));
    expect(answers.map((a) => a.status)).toEqual(Array(9).fill(200));
    expect(answers.every((a) => a.events.at(-1)?.data === '[DONE]')).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000); // the slow engine's answers take ~0.3 s each; hung scrapes hold nothing up
    expect(requestsSeen(sims).map((n, i) => n - before[i])).toEqual([3, 3, 3]);
    expect(await decisions()).toBe(fallbacks + 9);
    const scrapes = await gauge(gw, 'sluice_engine_scrapes_total');
    expect(scrapes[`endpoint=${sims[1].base},result=failed,upstream=sim`]).toBeGreaterThan(0);

    for (const s of sims) s.setMetrics('ok');
    await until(async () => Object.values(await gauge(gw, 'sluice_engine_metrics_fresh')).every((v) => v === 1), 'fresh readings again');
    await chat('metrics are back');
    expect(await decisions()).toBe(fallbacks + 9);
  });

  it('sends each conversation back to the endpoint holding its prefix', async () => {
    const turns = 4;
    const conversations = Array.from({ length: 6 }, (_, c) => [{ role: 'system', content: `Conversation ${c}. ${'context '.repeat(200)}` }] as Array<{ role: string; content: string }>);
    const where: number[][] = conversations.map(() => []);
    for (let t = 0; t < turns; t++) {
      for (const [c, messages] of conversations.entries()) {
        messages.push({ role: 'user', content: `turn ${t} of ${c}: ${'question '.repeat(20)}` });
        const before = requestsSeen(sims);
        const res = await post(`${gw.url}/v1/chat/completions`, { model: 'm', messages }, bearer(alice.key));
        expect(res.status).toBe(200);
        where[c].push(requestsSeen(sims).findIndex((n, i) => n > before[i]));
        messages.push({ role: 'assistant', content: res.body.choices[0].message.content });
      }
    }
    for (const w of where) expect(new Set(w).size).toBe(1);
    const blocks = await gauge(gw, 'sluice_prefix_blocks_total');
    const matched = await gauge(gw, 'sluice_prefix_blocks_matched_total');
    expect(matched['upstream=sim'] / blocks['upstream=sim']).toBeGreaterThan(0.5);
  });

  it('reports what it reads and decides in a valid exposition', async () => {
    const text = (await scrape(gw.metrics!.url)).text;
    expect(promtoolCheck(text).output).not.toMatch(/error/i);
    const samples = parseExposition(text);
    for (const name of ['sluice_engine_queue', 'sluice_engine_running', 'sluice_engine_kv_cache_usage', 'sluice_engine_metrics_age_seconds']) {
      expect(Object.keys(series(samples, name)).sort()).toEqual(sims.map((s) => `endpoint=${s.base},upstream=sim`).sort());
    }
    expect(Object.values(series(samples, 'sluice_engine_metrics_age_seconds')).every((v) => v >= 0 && v < 0.2)).toBe(true);
    expect(series(samples, 'sluice_prefix_index_entries')['upstream=sim']).toBeGreaterThan(0);
  });
});

describe('the prefix index under a long run', () => {
  it('stays within its bound in entries and memory, however many prompts pass', async () => {
    const sims = await Promise.all([0, 1, 2].map(() => startEngineSim({ slots: 8, decodeMsPerToken: 0, firstEventMs: 0 })));
    const gw = await fleetBehind(sims, { scoring: { prefix: { blockChars: 16, entriesPerEndpoint: 40 } } });
    try {
      const bound = 3 * 40;
      let peak = 0;
      for (let round = 0; round < 20; round++) {
        const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: `prompt ${round}-${i} `.repeat(30) }] }, bearer(alice.key))));
        expect(answers.every((a) => a.status === 200)).toBe(true);
        peak = Math.max(peak, (await gauge(gw, 'sluice_prefix_index_entries'))['upstream=sim']);
      }
      expect(peak).toBe(bound); // 200 prompts of ~20 blocks each filled it, and it never grew past it
      const bytes = (await gauge(gw, 'sluice_prefix_index_bytes'))['upstream=sim'];
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThanOrEqual(bound * 48);
    } finally {
      await gw.close();
      await Promise.all(sims.map((s) => s.close()));
    }
  });

  it('stops scraping the old fleet on reload', async () => {
    const sim = await startEngineSim();
    const gw = await fleetBehind([sim]);
    try {
      await until(() => sim.stats.metricsScrapes >= 2, 'scrapes');
      // The old runtime closes once its requests are done (none here): its scraper stops with it.
      await gw.gateway.swap({ file: 'inline.yaml', config: validateConfig({ server: { port: 0 }, keys: [alice.entry], upstreams: { sim: { endpoints: [{ url: sim.base }] } }, routes: [{ model: '*', upstream: 'sim' }] }, 'inline.yaml', {}) });
      await until(async () => Object.keys(await gauge(gw, 'sluice_engine_metrics_fresh')).length === 0, 'the old fleet to leave the metrics');
      const after = sim.stats.metricsScrapes;
      expect((await post(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, bearer(alice.key))).status).toBe(200);
      // Ten intervals later (the request above took longer than one), still no new scrape.
      const until10 = Date.now() + 500;
      await until(() => Date.now() >= until10 || sim.stats.metricsScrapes > after, 'a scrape or ten intervals');
      expect(sim.stats.metricsScrapes).toBe(after);
    } finally {
      await gw.close();
      await sim.close();
    }
  });
});
