// The Prometheus registry a gateway hands its plugins (services.metrics).
// prom-client's default process and Node metrics are collected once per
// process (their collectors cannot be stopped, and they describe the process,
// not a gateway); each gateway gets a fresh registry that shares them, so two
// gateways in one process (tests) never share request counters.
import { collectDefaultMetrics, Registry } from 'prom-client';

// Gauges that prom-client names like counters, which `promtool check metrics`
// rejects. Nothing is lost: each is the sum of the same metric without
// `_total`, labelled by type (nodejs_active_handles{type} and so on).
const NOT_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

let processMetrics: Registry | undefined;

function defaultMetrics(): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
    for (const name of NOT_COUNTERS) processMetrics.removeSingleMetric(name);
  }
  return processMetrics;
}

export function createMetricsRegistry(): Registry {
  return Registry.merge([defaultMetrics()]);
}
