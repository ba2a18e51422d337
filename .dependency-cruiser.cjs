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
      comment: 'src/pipeline/contract.ts imports only the request types, the config schema, the error catalogue and the admission service\'s types.',
      from: { path: '^src/pipeline/contract\\.ts$' }, to: { path: '^src/', pathNot: '^src/(types|errors|config/schema|admission/types)\\.ts$' },
    },
    {
      name: 'leaves-stay-leaves', severity: 'error',
      comment: 'The leaves under the contract import nothing from the core but each other.',
      from: { path: '^src/(types|errors|admission/types|config/(schema|fleet-schema|values))\\.ts$' }, to: { path: '^src/', pathNot: '^src/(types|errors|admission/types|config/(schema|fleet-schema|values))\\.ts$' },
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
