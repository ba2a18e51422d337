/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // jose ships ES modules only: Node loads them with require(), jest's module system does not, so they are compiled to CommonJS for the tests.
    '/node_modules/jose/.+\\.js$': ['ts-jest', { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', isolatedModules: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  // The suite's own Redis and the programs it needs: `npm test` needs nothing running beforehand.
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 20000,
};
