// config/grafana-dashboard.json, checked statically: valid JSON with a
// Prometheus data-source variable, every query valid PromQL (promtool) over
// metrics the gateway really exposes, and the panels operators asked for;
// then evaluated (promtool test rules) over what a healthy gateway exposes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { registerMetrics } from '../../../plugins/metrics/metrics';
import { plugin as metricsPlugin } from '../../../plugins/metrics';
import { recorderFor } from '../../../plugins/metrics/recorder';
import { validateConfig } from '../../../src/config/load';
import { createMetricsRegistry } from '../../../src/metrics/registry';
import { parseExposition, promtool } from '../../support/metrics';
import { pluginEnv } from '../../plugins/helpers';

const dashboard = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'config', 'grafana-dashboard.json'), 'utf8'));
const panels: any[] = dashboard.panels.filter((p: any) => p.type !== 'row');
const exprs: string[] = panels.flatMap((p) => p.targets.map((t: any) => t.expr));

// Registered by the rate-limit plugin when it is configured.
const RATE_LIMIT_METRICS = ['sluice_redis_up', 'sluice_limiter_fallback_total'];

function exposedNames(): Set<string> {
  const names = new Set(RATE_LIMIT_METRICS);
  const registry = createMetricsRegistry();
  registerMetrics(registry, { cost: new Map(), requests: new Map(), tokens: new Map() });
  for (const metric of registry.getMetricsAsArray()) {
    const { name, type } = metric as unknown as { name: string; type: string };
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    else names.add(name);
  }
  return names;
}

/** Grafana's variables, replaced by what they stand for, so promtool can parse the query. */
const concrete = (expr: string): string => expr.replace(/\$__rate_interval|\$__range/g, '5m').replace(/\$model/g, '.*');

describe('grafana dashboard', () => {
  it('selects its Prometheus data source through a variable used by every panel', () => {
    const variable = dashboard.templating.list.find((v: any) => v.type === 'datasource');
    expect(variable).toMatchObject({ name: 'datasource', query: 'prometheus' });
    for (const panel of panels) {
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      for (const target of panel.targets) expect(target.datasource.uid).toBe('${datasource}');
    }
  });

  it('queries only metrics the gateway exposes', () => {
    const known = exposedNames();
    const used = new Set(exprs.flatMap((e) => e.match(/\b(?:sluice|process|nodejs)_[a-z0-9_]+/g) ?? []));
    expect(used.size).toBeGreaterThan(10);
    for (const name of used) expect({ name, known: known.has(name) }).toEqual({ name, known: true });
  });

  it('has the panels operators asked for', () => {
    const has = (pattern: RegExp) => expect(exprs.some((e) => pattern.test(e))).toBe(true);
    has(/sum by \(status\) \(rate\(sluice_requests_total/);
    has(/histogram_quantile\(0\.99, sum by \(le\) \(rate\(sluice_request_duration_seconds_bucket/);
    has(/histogram_quantile\(0\.95, sum by \(le\) \(rate\(sluice_stream_first_event_seconds_bucket/);
    has(/sum by \(org, type\) \(rate\(sluice_tokens_total/);
    has(/sum by \(model, type\) \(rate\(sluice_tokens_total/);
    has(/sum by \(reason\) \(rate\(sluice_requests_total\{[^}]*reason!=""/);
    has(/sum\(sluice_active_streams\)/);
  });

  it('lays its panels out without overlaps and with unique ids', () => {
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      const { x, y, w, h } = p.gridPos;
      expect(x + w).toBeLessThanOrEqual(24);
      for (let i = x; i < x + w; i++) for (let j = y; j < y + h; j++) {
        expect(cells.has(`${i},${j}`)).toBe(false);
        cells.add(`${i},${j}`);
      }
    }
    const ids = dashboard.panels.map((p: any) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has only valid PromQL (promtool check rules)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-dashboard-'));
    try {
      const file = join(dir, 'rules.yml');
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: exprs.map((e, i) => ({ record: `dashboard:query_${i}`, expr: concrete(e) })) }] }));
      expect(promtool(['check', 'rules', file])).toMatchObject({ status: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** What a healthy gateway exposes: the metrics plugin as the gateway creates it, and requests that all succeeded. */
async function healthyExposition(): Promise<string> {
  const config = validateConfig({ upstreams: { b: { url: 'http://127.0.0.1:1/v1' } }, routes: [{ model: 'demo-chat', upstream: 'b' }] }, '(inline)', {});
  const registry = createMetricsRegistry();
  await metricsPlugin.create({}, pluginEnv(metricsPlugin, config, { metrics: registry }));
  recorderFor(registry).request('chat', 'v1', 'demo-chat', 200, '');
  return registry.metrics();
}

const panelExpr = (title: string): string => concrete(panels.find((p) => p.title === title)!.targets[0].expr);

describe('grafana dashboard on a healthy gateway', () => {
  it('shows 0, never "No data", on the error, refusal and failure panels', async () => {
    // Ten minutes of scrapes: the success counter climbs (traffic), every other series stays where it started.
    const series = parseExposition(await healthyExposition())
      .filter((s) => s.name.startsWith('sluice_'))
      .map((s) => ({
        series: `${s.name}{${Object.entries(s.labels).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`,
        values: s.name === 'sluice_requests_total' ? '0+3x20' : `${s.value}+0x20`,
      }));
    const zero = (labels: Record<string, string> = {}) => ({ labels: `{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}}`, value: 0 });
    const expected: Record<string, Array<ReturnType<typeof zero>>> = {
      'Error ratio (5xx)': [zero()],
      'Refusals and errors by reason': [zero({ reason: 'none' })],
      'Rate limited by scope and budget': [['key', 'concurrency'], ['model', 'concurrency'], ['org', 'concurrency'], ['upstream', 'concurrency'], ['backend', 'requests'], ['key', 'requests'], ['org', 'requests'], ['team', 'requests'], ['key', 'tokens'], ['org', 'tokens'], ['team', 'tokens']].map(([scope, budget]) => zero({ budget, scope })),
      'Content filter blocks': ['chat', 'embeddings', 'images', 'moderations', 'passthrough', 'rerank', 'score', 'speech', 'transcriptions', 'translations'].map((endpoint) => zero({ endpoint })),
      'Backend errors by upstream and kind': ['connect', 'status', 'stream', 'timeout'].map((kind) => zero({ kind, upstream: 'b' })),
      'Estimated share of tokens': [zero()],
      'Limiter fallback decisions': [zero()],
    };
    const dir = mkdtempSync(join(tmpdir(), 'sluice-dashboard-'));
    try {
      const file = join(dir, 'healthy.test.yml');
      writeFileSync(file, stringify({
        rule_files: [],
        tests: [{
          interval: '30s',
          input_series: series,
          promql_expr_test: Object.entries(expected).map(([title, exp_samples]) => ({ expr: panelExpr(title), eval_time: '10m', exp_samples })),
        }],
      }));
      const run = promtool(['test', 'rules', file]);
      expect(run.output).toContain('SUCCESS');
      expect(run.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
