// The benchmark's results as the table `npm run bench` prints, with each
// target met or missed.

export const round = (n: number, d = 3): number => Math.round(n * 10 ** d) / 10 ** d;

/** A change with its sign, "+8.4 %", "-12 µs", "0 %". */
const signed = (n: number, d: number, unit: string): string => `${round(n, d) > 0 ? '+' : ''}${round(n, d)} ${unit}`;
/** The change from `from` to `to` in per cent, signed. */
const change = (from: number, to: number): string => signed(100 * (to / from - 1), 1, '%');

/** A CPU figure's lowest and highest round, "498-540" (one round: the figure). */
function spread(r: any, kind: 'json' | 'stream', name: string): string {
  const xs: number[] | undefined = r.cpuMicrosPerRequest.rounds?.[kind]?.[name];
  return xs === undefined || xs.length < 2 ? '-' : `${Math.min(...xs)}-${Math.max(...xs)}`;
}

export function formatTable(r: any, met: Record<string, boolean>): string {
  const rows: string[][] = [
    ['measure', 'direct', 'bare proxy', 'gateway', 'gateway - direct'],
    ['throughput, req/s (32 conns)', r.throughput.direct, r.throughput.bare, r.throughput.gateway, `${r.throughput.gatewayOverBare} x bare`],
    ['latency p50, ms (1 conn)', r.latencyMs.direct.p50, r.latencyMs.bare.p50, r.latencyMs.gateway.p50, r.addedLatencyMs.p50],
    ['latency p99, ms (1 conn)', r.latencyMs.direct.p99, r.latencyMs.bare.p99, r.latencyMs.gateway.p99, r.addedLatencyMs.p99],
    ['first event p50, ms', r.stream.firstEventMs.direct.p50, r.stream.firstEventMs.bare.p50, r.stream.firstEventMs.gateway.p50, r.stream.addedFirstEventMs.p50],
    ['first event p99, ms', r.stream.firstEventMs.direct.p99, r.stream.firstEventMs.bare.p99, r.stream.firstEventMs.gateway.p99, r.stream.addedFirstEventMs.p99],
    ['event gap p50, ms (20 ms paced)', r.stream.gapMs.direct.p50, r.stream.gapMs.bare.p50, r.stream.gapMs.gateway.p50, r.stream.addedGapMs.p50],
    ['event gap p99, ms (20 ms paced)', r.stream.gapMs.direct.p99, r.stream.gapMs.bare.p99, r.stream.gapMs.gateway.p99, r.stream.addedGapMs.p99],
    ...Object.entries(r.stream.protocols as Record<string, { addedFirstDeltaMs: { p50: number; p99: number }; addedGapMs: { p50: number; p99: number } }>).map(([p, s]) => [
      `${p} (translated): added first text delta p50 / p99, gap p99, ms`, '', '', '', `${s.addedFirstDeltaMs.p50} / ${s.addedFirstDeltaMs.p99}, ${s.addedGapMs.p99}`]),
    ...[128, 512].map((n) => [`${n} streams: stalled/failed`, ...['direct', 'bare', 'gateway'].map((t) => `${r.concurrency[n][t].stalled}/${r.concurrency[n][t].failed}`), '']),
    ...[128, 512].map((n) => [`${n} streams: worst gap / first event, ms`, ...['direct', 'bare', 'gateway'].map((t) => `${r.concurrency[n][t].maxGapMs} / ${r.concurrency[n][t].maxFirstEventMs}`), '']),
    [`gateway at 1 / 2 workers, req/s (${typeof r.workers.coresPerWorker === 'number' ? `${r.workers.coresPerWorker} core each` : 'no quota'})`, '', '', `${r.workers.one.rps} / ${r.workers.two.rps}`, `${r.workers.twoOverOne} x 1 worker`],
    ['CPU cores in use at 1 / 2 workers: gateway', '', '', `${r.workers.one.cores.gateway} / ${r.workers.two.cores.gateway}`, 'all its processes'],
    ['CPU cores in use at 1 / 2 workers: load, backend', '', '', `${r.workers.one.cores.load}, ${r.workers.one.cores.backend} / ${r.workers.two.cores.load}, ${r.workers.two.cores.backend}`, ''],
    ['gateway req/s per gateway core at 1 / 2 workers', '', '', `${r.workers.one.rpsPerCore} / ${r.workers.two.rpsPerCore}`, ''],
    ['gateway RSS idle / 512-stream peak, MB', '', '', `${r.rssMb.idle} / ${r.rssMb.peak512}`, ''],
    ['gateway RSS at 2 workers idle / after load, MB', '', '', `${r.rssMb.workers2Idle} / ${r.rssMb.workers2Loaded}`, 'primary + workers'],
    ['CPU µs per JSON request', '', r.cpuMicrosPerRequest.json.bare, r.cpuMicrosPerRequest.json.gateway, `${round(r.cpuMicrosPerRequest.json.gateway / r.cpuMicrosPerRequest.json.bare, 2)} x bare`],
    ['CPU µs per streamed request (20 events)', '', r.cpuMicrosPerRequest.stream.bare, r.cpuMicrosPerRequest.stream.gateway, `${round(r.cpuMicrosPerRequest.stream.gateway / r.cpuMicrosPerRequest.stream.bare, 2)} x bare`],
    ...(['json', 'stream'] as const).map((k) => [`CPU µs per ${k === 'json' ? 'JSON' : 'streamed'} request, tracing off / sampled out / every request`, '', '',
      `${r.cpuMicrosPerRequest[k].gateway} / ${r.cpuMicrosPerRequest[k].tracedSampledOut} / ${r.cpuMicrosPerRequest[k].tracedAll}`,
      `${change(r.cpuMicrosPerRequest[k].gateway, r.cpuMicrosPerRequest[k].tracedSampledOut)} / ${change(r.cpuMicrosPerRequest[k].gateway, r.cpuMicrosPerRequest[k].tracedAll)}`]),
    ...(['json', 'stream'] as const).map((k) => [`CPU µs per ${k === 'json' ? 'JSON' : 'streamed'} request, spend records off / on (memory)`, '', '',
      `${r.cpuMicrosPerRequest[k].spendOff} / ${r.cpuMicrosPerRequest[k].gateway}`, signed(r.cpuMicrosPerRequest[k].gateway - r.cpuMicrosPerRequest[k].spendOff, 0, 'µs')]),
    ...(['json', 'stream'] as const).map((k) => [`CPU µs per ${k === 'json' ? 'JSON' : 'streamed'} request, without / with a dollar budget`, '', '',
      `${r.cpuMicrosPerRequest[k].gateway} (${spread(r, k, 'gateway')}) / ${r.cpuMicrosPerRequest[k].dollarBudget} (${spread(r, k, 'dollarBudget')})`, change(r.cpuMicrosPerRequest[k].gateway, r.cpuMicrosPerRequest[k].dollarBudget)]),
    ...(['relay', 'federated'] as const).map((k) => [`MCP tool call via ${k === 'relay' ? '/mcp/<server>' : '/mcp (federated)'}: latency p50 / p99, ms`, `${r.mcp.latencyMs.direct.p50} / ${r.mcp.latencyMs.direct.p99}`, '',
      `${r.mcp.latencyMs[k].p50} / ${r.mcp.latencyMs[k].p99}`, `${r.mcp.addedLatencyMs[k].p50} / ${r.mcp.addedLatencyMs[k].p99}`]),
    ['MCP tool call: CPU µs per call, server / gateway relay / gateway federated', r.mcp.cpuMicrosPerCall.server, '', `${r.mcp.cpuMicrosPerCall.gatewayRelay} / ${r.mcp.cpuMicrosPerCall.gatewayFederated}`, ''],
    ['output rules off / on: CPU µs per streamed request', '', '', `${r.outputRules.cpuMicrosPerStream.off} / ${r.outputRules.cpuMicrosPerStream.on}`, signed(r.outputRules.cpuMicrosPerStream.on - r.outputRules.cpuMicrosPerStream.off, 0, 'µs')],
    ['output rules off / on: event gap p99, ms', '', '', `${r.outputRules.gapMs.off.p99} / ${r.outputRules.gapMs.on.p99}`, `${r.outputRules.addedGapP99Ms} ms`],
    ...(r.cpuMicrosPerRequest.json.baseline === undefined ? [] : [
      ['baseline gateway CPU µs per JSON / streamed request', '', '', `${r.cpuMicrosPerRequest.json.baseline} / ${r.cpuMicrosPerRequest.stream.baseline}`, 'BENCH_BASELINE'],
      ['baseline gateway throughput, req/s (32 conns)', '', '', r.throughput.baseline, `${r.throughput.baselineOverBare} x bare`],
    ]),
    ...(r.cpuMicrosPerRequest.stream.baselineOutput === undefined ? [] : [
      ['CPU µs per streamed request with output rules on, baseline / this tree (unpriced; rounds\' range)', '', '',
        `${r.cpuMicrosPerRequest.stream.baselineOutput} (${spread(r, 'stream', 'baselineOutput')}) / ${r.cpuMicrosPerRequest.stream.unpricedOutput} (${spread(r, 'stream', 'unpricedOutput')})`,
        change(r.cpuMicrosPerRequest.stream.baselineOutput, r.cpuMicrosPerRequest.stream.unpricedOutput)],
    ]),
    ...Object.keys(r.cpuMicrosPerRequest.json).filter((k) => k.startsWith('baseline:')).map((k) => [
      `tree ${k.slice('baseline:'.length)}: CPU µs per JSON / streamed request (rounds' range)`, '', '', `${r.cpuMicrosPerRequest.json[k]} (${spread(r, 'json', k)}) / ${r.cpuMicrosPerRequest.stream[k]} (${spread(r, 'stream', k)})`,
      `this tree unpriced: ${change(r.cpuMicrosPerRequest.json[k], r.cpuMicrosPerRequest.json.unpriced)} / ${change(r.cpuMicrosPerRequest.stream[k], r.cpuMicrosPerRequest.stream.unpriced)}`]),
    ['CPU µs per JSON / streamed request, this tree unpriced (the baselines\' config; rounds\' range)', '', '', `${r.cpuMicrosPerRequest.json.unpriced} (${spread(r, 'json', 'unpriced')}) / ${r.cpuMicrosPerRequest.stream.unpriced} (${spread(r, 'stream', 'unpriced')})`, ''],
  ].map((row) => row.map(String));
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const line = (row: string[]) => `| ${row.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  const table = [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
  const checks = Object.entries(met).map(([k, v]) => `${v ? 'met ' : 'MISS'}  ${k}`).join('\n');
  return `Sluice benchmark ${r.date} — ${r.machine.cpus} x ${r.machine.cpu}, ${r.machine.memGiB} GiB, Node ${r.machine.node}, load from ${r.loadGenerator}${r.quick ? ' (quick)' : ''}\n\n${table}\n\n${checks}\n`;
}
