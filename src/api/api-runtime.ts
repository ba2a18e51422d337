// What the API reads of the config in force: its routes, plugins and
// upstreams, and the services a request meets on its way. src/runtime.ts
// builds the whole runtime, which is this and more; the API never imports it.
import type { Admission } from '../admission';
import type { EndpointLimits } from '../config/endpoint-limits-schema';
import type { FleetMetrics } from '../fleet/metrics';
import type { Pipeline } from '../pipeline/pipeline';
import type { Reply } from '../proxy/reply';
import type { Upstream } from '../proxy/upstream';
import type { RouteTable } from '../routing/routes';
import type { DroppedReporter } from './dropped';
import type { StoredTurns } from './stored-turns';

export interface ApiRuntime {
  readonly routes: RouteTable;
  readonly pipeline: Pipeline;
  readonly upstreams: ReadonlyMap<string, Upstream>;
  /** The fleets' counters: ejections, retries, fallbacks. */
  readonly fleet: FleetMetrics;
  /** This config's in-flight limits and wait queue. */
  readonly admission: Admission;
  /** The one writer of a forwarded request's response. */
  readonly reply: Reply;
  /** Where a translation says what it left out (header, log, counter). */
  readonly dropped: DroppedReporter;
  /** The Responses API's stored turns, when the gateway keeps them. */
  readonly responses: StoredTurns;
  /** What one request of an input endpoint may carry (embeddings, rerank, score, moderations). */
  readonly endpointLimits: EndpointLimits;
}
