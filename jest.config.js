// Nest 12 and Prisma 7 ship ES modules; Jest loads them in its native ESM mode
// (npm test runs it with --experimental-vm-modules), with SWC compiling our TypeScript (types are checked by
// `npm run typecheck`, which `npm test` runs first). ts-jest did it before: transpiling the module graph cost a
// fresh clone's run about 60 CPU-seconds (the suite with every test skipped: 114 CPU-s with an empty cache
// against 52 with a warm one, the six workers each compiling the application at their start); SWC's compile of
// it is a small part of a second.
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        // as tsconfig.json compiles it: legacy decorators with their design-type metadata (Nest's injection and
        // class-validator read it), class fields defined (ES2022 and later), class names kept (error names, logs)
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
          target: 'es2023',
          keepClassNames: true,
        },
        sourceMaps: 'inline',
      },
    ],
  },
  // the e2e files, and the unit tests as one file (test/unit/units.group.ts: one module graph for all of them);
  // jest.unit.config.js runs each unit file alone
  testMatch: ['<rootDir>/test/e2e/**/*.spec.ts', '<rootDir>/test/unit/units.group.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  // slowest files first, from committed durations where Jest's cache has none (a fresh clone)
  testSequencer: '<rootDir>/test/support/test-sequencer.mjs',
  // A test's budget is for a hang, not a measure of speed: beside the full suite (six files on two cores) a
  // test takes up to five times its quiet time. Measured on a fresh clone (every test's time over its budget,
  // a test environment recording both): with 60 s, nine tests used half their budget or more, the most 0.78.
  testTimeout: 120_000,
  // Six test files at once on a 2-core machine: most of a file's time is waiting (on upstream fakes, polls,
  // child processes). Measured on the whole suite (jest alone, warm cache): three workers 648 s with the CPUs
  // idle 15 % of the time, four 548 s with them idle 6.5 %; two had left a quarter idle (15-16 min). Later,
  // fresh clones of one commit (1,544 tests): four 651 s (the CPUs idle a quarter of the run: the long files
  // that wait on polls ran together), six 488 s (idle a tenth), eight 634 s with a test past its 60 s (the
  // sandbox's speech, its CPU shared eight ways).
  maxWorkers: 6,
  // A worker keeps what each file's module graph leaves behind (its heap grew by 50-100 MB a file, to 1 GB and
  // more by the end); one whose heap is past this after a file is replaced by a fresh one. Measured on 18
  // e2e files with two workers, one run each: 366 s of CPU against 383 s (4 %; runs of the same commit differ by
  // about as much), and the workers' heaps stay under half a GB.
  workerIdleMemoryLimit: '400MB',
};
