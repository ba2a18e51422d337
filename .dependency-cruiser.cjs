// The arrows of the codebase, checked in CI (`npm run depcheck`):
// no import cycles; plugins reach the core only through its public entry
// (src/index.ts); the core imports no plugin except at the composition root
// (src/gateway.ts hands the built-in list to the registry); the plugin
// contract imports only the leaves beneath it.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'An import cycle: split the module or move the shared piece down.', from: {}, to: { circular: true } },
    {
      name: 'plugins-use-the-public-api', severity: 'error',
      comment: 'A plugin imports the core only through src/index.ts.',
      from: { path: '^plugins/' }, to: { path: '^src/', pathNot: '^src/index\\.ts$' },
    },
    {
      name: 'core-names-no-plugin', severity: 'error',
      comment: 'Only the composition root (src/gateway.ts) knows the built-in plugins.',
      from: { path: '^src/', pathNot: '^src/gateway\\.ts$' }, to: { path: '^plugins/' },
    },
    {
      name: 'contract-is-a-leaf', severity: 'error',
      comment: 'src/contract/ (the plugin contract, the request view\'s types, the admission service\'s types, the error type and its catalogue) imports nothing from the core but the shape of the config it hands to plugins.',
      from: { path: '^src/contract/' }, to: { path: '^src/', pathNot: '^src/(contract/|config/(schema|fleet-schema|services-schema|pricing-schema|endpoint-limits-schema|mcp-oauth-schema|mcp-schema|values)\\.ts$)' },
    },
    {
      name: 'leaves-stay-leaves', severity: 'error',
      comment: 'The config\'s shape, beside the contract, imports nothing from the core but itself.',
      from: { path: '^src/config/(schema|fleet-schema|services-schema|pricing-schema|endpoint-limits-schema|mcp-oauth-schema|mcp-schema|values)\\.ts$' }, to: { path: '^src/', pathNot: '^src/config/(schema|fleet-schema|services-schema|pricing-schema|endpoint-limits-schema|mcp-oauth-schema|mcp-schema|values)\\.ts$' },
    },
    // Per folder: no folder imports one above it. From the bottom: the leaves and
    // src/request/ (the request view's helpers); the services beneath the pipeline
    // (auth, routing, fleet, tracing, admission, limiters, pricing, spend, metrics, redis);
    // src/pipeline/; src/protocols/; src/proxy/; then the API (src/api/, and
    // its pass-through routes, src/api/passthrough/, on top of it; the MCP relay,
    // src/mcp/, beside them, which only the runtime and the app import); the key store (nothing of the request path)
    // under the admin listener (the API's body reader, no forwarding); then the
    // process around it all (cluster, runtime, app, gateway, server, cli), which
    // has no rule: nothing is above it.
    {
      name: 'text-is-a-leaf', severity: 'error',
      comment: 'src/text/ (text as a reader sees it: the fold, its map, JSON escapes) imports nothing from the core.',
      from: { path: '^src/text/' }, to: { path: '^src/', pathNot: '^src/text/' },
    },
    {
      name: 'plumbing-is-a-leaf', severity: 'error',
      comment: 'src/plumbing/ (the logger, its writer and time stamps, the environment, listening, the version, backpressure) imports nothing from the core but itself and the contract.',
      from: { path: '^src/plumbing/' }, to: { path: '^src/', pathNot: '^src/(plumbing/|contract/)' },
    },
    {
      name: 'worker-link-under-the-services', severity: 'error',
      comment: 'src/worker-link/ (a worker\'s batched calls to the primary, and the primary\'s polls of its workers) knows the contract\'s link, nothing of the services that use it nor of the process.',
      from: { path: '^src/worker-link/' }, to: { path: '^src/', pathNot: '^src/(worker-link/|contract/)' },
    },
    {
      name: 'request-view-is-a-leaf', severity: 'error',
      comment: 'src/request/ (JSON depth, body validation, texts, usage estimates, the JSON reply) imports only the leaves.',
      from: { path: '^src/request/' }, to: { path: '^src/', pathNot: '^src/(request/|contract/|config/)' },
    },
    {
      name: 'services-under-the-pipeline', severity: 'error',
      comment: 'Auth, routing, fleets, tracing, admission, the limiters, pricing, spend, the metrics listener and Redis know the contract, not the pipeline that runs it nor anything above.',
      from: { path: '^src/(auth|routing|fleet|tracing|admission|limiters|pricing|spend|metrics|redis)/' },
      to: { path: '^src/(api|proxy|protocols|output-rules|responses-store|admin|cli|cluster|keys|app|gateway|server|runtime|reload|pipeline/(context|runner|pipeline|registry|hook-check))' },
    },
    {
      name: 'pipeline-under-the-protocols', severity: 'error',
      comment: 'The pipeline runs plugins on the request view: it knows no protocol, no forwarding, no endpoint.',
      from: { path: '^src/pipeline/' }, to: { path: '^src/(api|proxy|protocols|output-rules|responses-store|admin|cli|cluster|keys|app|gateway|server|runtime|reload)' },
    },
    {
      name: 'protocols-under-the-proxy', severity: 'error',
      comment: 'A protocol translates and reads: pure functions beneath the forwarding that uses them.',
      from: { path: '^src/protocols/' }, to: { path: '^src/(api|proxy|output-rules|responses-store|admin|cli|app|gateway|server|runtime|reload)' },
    },
    {
      name: 'stores-and-rules-under-the-proxy', severity: 'error',
      comment: 'The Responses API\'s store and the output rules use the protocols\' types and readers; nothing of the forwarding that uses them.',
      from: { path: '^src/(responses-store|output-rules)/' }, to: { path: '^src/(api|proxy|admin|cli|cluster|keys|app|gateway|server|runtime|reload)' },
    },
    {
      name: 'proxy-under-the-api', severity: 'error',
      comment: 'Forwarding knows nothing of the endpoints that call it.',
      from: { path: '^src/proxy/' }, to: { path: '^src/(api|admin|cli|app|gateway|server|runtime|reload)' },
    },
    {
      name: 'api-under-the-process', severity: 'error',
      comment: 'The API (its pass-through routes too) knows the runtime a request carries, not the admin listener, the key store, the workers or the process.',
      from: { path: '^src/api/' }, to: { path: '^src/(admin|cli|cluster|keys|app|gateway|server|reload)' },
    },
    {
      name: 'passthrough-on-top-of-the-api', severity: 'error',
      comment: 'The client APIs know nothing of the pass-through routes built on them (which reuse the API\'s body reader and the proxy\'s pool), nor of the runtime.',
      from: { path: '^src/api/', pathNot: '^src/api/passthrough/' }, to: { path: '^src/(api/passthrough/|runtime)' },
    },
    {
      name: 'mcp-under-the-process', severity: 'error',
      comment: 'The MCP relay (src/mcp/) uses the keys, the API\'s body reader, the proxy\'s pool settings and the plumbing; it knows nothing of the admin listener, the key store, the workers or the process.',
      from: { path: '^src/mcp/' }, to: { path: '^src/(admin|cli|cluster|keys|app|gateway|server|runtime|reload)' },
    },
    {
      name: 'only-the-process-knows-mcp', severity: 'error',
      comment: 'Nothing but the runtime (which builds it) and the app (which routes /mcp/<server> to it) imports the MCP relay.',
      from: { path: '^src/', pathNot: '^src/(mcp/|runtime\\.ts$|app\\.ts$)' }, to: { path: '^src/mcp/' },
    },
    {
      name: 'keys-under-the-admin', severity: 'error',
      comment: 'The key store (a file, Redis, the primary\'s copy) knows keys, storage and the contract: nothing of the request path above the services, the admin listener that edits it, or the process.',
      from: { path: '^src/keys/' },
      to: { path: '^src/(api|proxy|protocols|output-rules|responses-store|admin|cli|cluster|app|gateway|server|runtime|reload|pipeline/(context|runner|pipeline|registry|hook-check))' },
    },
    {
      name: 'admin-under-the-process', severity: 'error',
      comment: 'The admin listener uses the API\'s body reader and error middleware, the key store and the spend records; it forwards nothing and knows nothing of the workers or the process that starts it.',
      from: { path: '^src/admin/' }, to: { path: '^src/(proxy|protocols|output-rules|responses-store|cli|cluster|app|gateway|server|runtime|reload)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a contract that depends on the core's types is not a leaf.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules|test|bench|bin)/' },
  },
};
