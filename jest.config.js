// Nest 12 and Prisma 7 ship ES modules; Jest loads them in its native ESM mode
// (npm test runs it with --experimental-vm-modules), with ts-jest compiling our TypeScript.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  // slowest files first, from committed durations where Jest's cache has none (a fresh clone)
  testSequencer: '<rootDir>/test/support/test-sequencer.mjs',
  testTimeout: 60_000,
  // Three test files at once on a 2-core machine: most of a file's time is waiting (on upstream fakes, polls,
  // child processes), and two workers left a quarter of the CPU idle (measured: 15-16 min with two, 12-13 with three, before the tests' database ran without fsync).
  maxWorkers: 3,
};
