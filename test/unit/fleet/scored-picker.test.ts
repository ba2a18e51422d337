// The pure parts of the scored picker: reading the Prometheus text format,
// each engine flavour's names, prompt blocks and the bounded prefix index,
// and the picker's choices on given engine readings.
import { parseSample, readSeries } from '../../../src/fleet/prom-text';
import { readEngine } from '../../../src/fleet/engine-flavours';
import { EngineState } from '../../../src/fleet/engine-scraper';
import { PrefixIndex, promptBlocks } from '../../../src/fleet/prefix-index';
import { scoredPicker, type Decision } from '../../../src/fleet/scored-picker';
import { Member } from '../../../src/fleet/member';
import { scoringSchema, engineMetricsSchema } from '../../../src/config/fleet-schema';
import { validateConfig } from '../../../src/config/load';

const VLLM = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 2.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 4.0
vllm:num_requests_waiting_by_reason{reason="capacity"} 99
vllm:num_requests_waiting{engine="1",model_name="m"} 0
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.5
vllm:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 17
`;

describe('Prometheus text', () => {
  it('reads the wanted series only, at line starts, with labels, timestamps and special values', () => {
    const text = 'a{x="1"} 1\nab 2\n# a 3\nxa 4\na{y="a \\"q\\" } b",z="\\\\"} +Inf 1700000000\na\t-2.5e3\r\nb NaN\n';
    const got = readSeries(text, ['a', 'b', 'c']);
    expect(got.get('a')).toEqual([1, Infinity, -2500]);
    expect(got.get('b')).toEqual([NaN]);
    expect(got.has('c')).toBe(false);
  });

  it.each([
    ['a{x="1" 1', 'no closing brace'],
    ['a{x=1} 1', 'unquoted label value'],
    ['a{x="1"}1', 'no blank before the value'],
    ['a 1 2 3', 'too many fields'],
    ['a 0x10', 'a value the format does not allow'],
    ['a{x="\\q"} 1', 'a bad escape'],
    ['a ', 'no value'],
  ])('refuses %s (%s)', (line) => {
    expect(() => parseSample(line, 1)).toThrow(/malformed sample/);
  });

  it('reads vLLM: queues and running add up over engines, the fullest KV cache counts, a longer name is not the queue', () => {
    expect(readEngine(VLLM, 'vllm')).toEqual({ waiting: 4, running: 5, kvCacheUsage: 0.5 });
  });

  it('reads older vLLM, SGLang (both spellings), TGI and llama.cpp', () => {
    expect(readEngine('vllm:num_requests_waiting 1\nvllm:num_requests_running 2\nvllm:gpu_cache_usage_perc 0.9\n', 'vllm')).toEqual({ waiting: 1, running: 2, kvCacheUsage: 0.9 });
    expect(readEngine('sglang:num_queue_reqs{model_name="m"} 3\nsglang:num_running_reqs{model_name="m"} 8\nsglang:token_usage{model_name="m"} 0.28\n', 'sglang')).toEqual({ waiting: 3, running: 8, kvCacheUsage: 0.28 });
    expect(readEngine('sglang_num_queue_reqs 1\nsglang_num_running_reqs 2\n', 'sglang')).toEqual({ waiting: 1, running: 2, kvCacheUsage: undefined });
    expect(readEngine('tgi_queue_size 7\ntgi_batch_current_size 4\n', 'tgi')).toEqual({ waiting: 7, running: 4, kvCacheUsage: undefined });
    expect(readEngine('llamacpp:requests_deferred 2\nllamacpp:requests_processing 1\nllamacpp:kv_cache_usage_ratio 0.63\n', 'llamacpp')).toEqual({ waiting: 2, running: 1, kvCacheUsage: 0.63 });
  });

  it('fails a reading without a queue (wrong flavour, metrics off) or with a nonsense count', () => {
    expect(() => readEngine(VLLM, 'sglang')).toThrow(/no queue metric/);
    expect(() => readEngine('vllm:num_requests_waiting -1\nvllm:num_requests_running 0\n', 'vllm')).toThrow(/not a count/);
    expect(() => readEngine('vllm:num_requests_waiting NaN\nvllm:num_requests_running 0\n', 'vllm')).toThrow(/not a count/);
  });
});

describe('prompt blocks and the prefix index', () => {
  const sys = { role: 'system', content: 'x'.repeat(300) };
  const blocks = (messages: object[], model = 'm') => promptBlocks(model, messages, 64, 256);

  it('chains blocks: a shared start gives shared leading hashes, then they differ; the model keys them', () => {
    const a = blocks([sys, { role: 'user', content: 'a'.repeat(200) }]);
    const b = blocks([sys, { role: 'user', content: 'b'.repeat(200) }]);
    // role, separators and content: 309 + 207 characters make 8 whole blocks of 64 (the tail is not hashed).
    expect(a).toHaveLength(8);
    expect(a.slice(0, 4)).toEqual(b.slice(0, 4));
    expect(a.slice(5)).not.toEqual(b.slice(5));
    expect(blocks([sys], 'other')[0]).not.toBe(blocks([sys])[0]);
    // A later turn starts with the earlier turn's blocks.
    const later = blocks([sys, { role: 'user', content: 'a'.repeat(200) }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more'.repeat(40) }]);
    expect(later.slice(0, a.length)).toEqual(a);
  });

  it('hashes at most maxBlocks blocks', () => {
    expect(promptBlocks('m', [{ role: 'user', content: 'y'.repeat(100_000) }], 64, 10)).toHaveLength(10);
  });

  it('matches the longest remembered run of leading blocks, per endpoint', () => {
    const index = new PrefixIndex(2, 100);
    const a = blocks([sys, { role: 'user', content: 'a'.repeat(200) }]);
    const b = blocks([sys, { role: 'user', content: 'b'.repeat(200) }]);
    index.record(0, a);
    expect(index.match(0, a)).toBe(a.length);
    expect(index.match(0, b)).toBe(4);
    expect(index.match(1, a)).toBe(0);
  });

  it('stays within its capacity, evicting the least recently sent, the shared prefix last', () => {
    const index = new PrefixIndex(1, 20);
    const shared = blocks([sys]);
    for (let i = 0; i < 500; i++) {
      index.record(0, blocks([sys, { role: 'user', content: `${i} `.repeat(100) }]));
      expect(index.entries).toBeLessThanOrEqual(20);
    }
    expect(index.match(0, shared)).toBe(shared.length);
    expect(index.bytes).toBe(index.entries * 48);
  });
});

describe('scored picker', () => {
  const scoring = scoringSchema.parse({});
  const now = 1_000_000;
  const setup = (readings: Array<Partial<EngineState> | undefined>, random = () => 0) => {
    const members = readings.map((_, i) => new Member(`http://e${i}`, 1, i));
    const states = readings.map((r) => Object.assign(new EngineState(), r === undefined ? {} : { at: now - 10, ...r }));
    const index = new PrefixIndex(members.length, 1000);
    const decisions: Decision[] = [];
    const picker = scoredPicker({ scraper: { states, staleAfterMs: 200 }, index, scoring, decided: (d) => decisions.push(d), random });
    return { members, states, index, picker, decisions };
  };
  const convo = (n: number) => ({ model: 'm', messages: [{ role: 'system', content: 's'.repeat(2000) }, { role: 'user', content: `${n}`.repeat(500) }] });

  it('prefers the shorter queue and more KV headroom', () => {
    const { members, picker, decisions } = setup([{ waiting: 3 }, { waiting: 0 }, { waiting: 1, kvCacheUsage: 0.1 }]);
    expect(picker.pick(members, now)).toBe(members[1]);
    expect(decisions).toEqual(['load']);
  });

  it('sets a saturated endpoint aside: queue or KV over its threshold, or a stale reading', () => {
    const { members, picker } = setup([{ waiting: 6 }, { waiting: 0, kvCacheUsage: 0.95 }, { waiting: 0, at: now - 500 }, { waiting: 1, kvCacheUsage: 0.7 }]);
    // Each pick adds to its queue (sent since the scrape): 1 to 5 stays within the threshold.
    for (let i = 0; i < 5; i++) expect(picker.pick(members, now)).toBe(members[3]);
  });

  it('keeps every endpoint when all are saturated, and with no fresh reading ranks by requests in flight', () => {
    const sat = setup([{ waiting: 9 }, { waiting: 7 }]);
    expect(sat.picker.pick(sat.members, now)).toBe(sat.members[1]);
    expect(sat.decisions).toEqual(['all_saturated']);
    const none = setup([undefined, undefined, undefined]);
    none.members[0].inflight = 4;
    none.members[1].inflight = 1;
    none.members[2].inflight = 2;
    expect(none.picker.pick(none.members, now)).toBe(none.members[1]);
    expect(none.decisions).toEqual(['no_metrics']);
    // In-flight counts alone: a prefix held elsewhere does not pull a request onto a busier endpoint.
    none.index.record(0, promptBlocks('m', convo(1).messages, scoring.prefix.blockChars, scoring.prefix.maxBlocks));
    expect(none.picker.pick(none.members, now, undefined, convo(1))).toBe(none.members[1]);
  });

  it('counts what it sent since the last scrape, so a burst spreads instead of stampeding one endpoint', () => {
    const { members, picker } = setup([{ waiting: 0 }, { waiting: 0 }, { waiting: 0 }, { waiting: 0 }]);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 12; i++) counts[picker.pick(members, now)!.index]++;
    expect(counts).toEqual([3, 3, 3, 3]);
  });

  it('sends a conversation back where its prefix is, unless that endpoint is saturated', () => {
    const { members, states, picker, decisions } = setup([{ waiting: 0 }, { waiting: 0 }, { waiting: 0 }], () => 0.99);
    const first = picker.pick(members, now, undefined, convo(1))!;
    for (const s of states) s.record({ waiting: 1, running: 0 }, now, s.mark()); // a new scrape: even queues
    expect(picker.pick(members, now, undefined, convo(1))).toBe(first);
    expect(decisions).toEqual(['load', 'prefix']);
    states[first.index].record({ waiting: 6, running: 4 }, now, states[first.index].mark());
    expect(picker.pick(members, now, undefined, convo(1))).not.toBe(first);
  });

  it('breaks ties at random and never picks an excluded or ejected endpoint', () => {
    const a = setup([{ waiting: 0 }, { waiting: 0 }], () => 0);
    const b = setup([{ waiting: 0 }, { waiting: 0 }], () => 0.99);
    expect(a.picker.pick(a.members, now)).toBe(a.members[0]);
    expect(b.picker.pick(b.members, now)).toBe(b.members[1]);
    const c = setup([{ waiting: 0 }, { waiting: 5 }]);
    expect(c.picker.pick(c.members, now, new Set([c.members[0]]))).toBe(c.members[1]);
    c.members[1].ejectedUntil = now + 1000;
    expect(c.picker.pick(c.members, now, new Set([c.members[0]]))).toBeUndefined();
  });
});

describe('config', () => {
  const upstream = (extra: object) => ({ upstreams: { u: { endpoints: [{ url: 'http://127.0.0.1:1/v1' }], ...extra } }, routes: [{ model: 'm', upstream: 'u' }] });
  const problems = (config: object): string => { try { validateConfig(config, 'inline.yaml', {}); return ''; } catch (err) { return String((err as Error).message); } };

  it('defaults the engine metrics and the scoring', () => {
    expect(engineMetricsSchema.parse({})).toEqual({ path: '/metrics', flavour: 'vllm', intervalMs: 50, maxBytes: 4 * 1024 ** 2 });
    expect(scoringSchema.parse({})).toMatchObject({ queueThreshold: 5, kvCacheThreshold: 0.8, weights: { queue: 2, kvCache: 1, prefix: 3 }, prefix: { blockChars: 128, maxBlocks: 256, entriesPerEndpoint: 50_000 } });
  });

  it('refuses a scored picker without engine metrics, an unknown flavour and a staleness bound within one interval', () => {
    expect(problems(upstream({ picker: 'scored' }))).toMatch(/upstreams\.u\.engineMetrics: picker scored/);
    expect(problems(upstream({ picker: 'scored', engineMetrics: { flavour: 'triton' } }))).toMatch(/upstreams\.u\.engineMetrics\.flavour/);
    expect(problems(upstream({ picker: 'scored', engineMetrics: { intervalMs: 100, staleAfterMs: 100 } }))).toMatch(/staleAfterMs must be longer than intervalMs/);
    expect(problems(upstream({ picker: 'scored', engineMetrics: { flavour: 'sglang' }, scoring: { weights: { prefix: 5 } } }))).toBe('');
  });
});
