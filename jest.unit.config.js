// The unit tests alone (test/unit): no app, no database, so no global set-up (no PostgreSQL started, nothing
// built in dist/ read), with the coverage of the vendor layer (`npm run coverage:vendors`).
import base from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  testMatch: ['<rootDir>/test/unit/**/*.spec.ts'],
  globalSetup: undefined,
  globalTeardown: undefined,
  collectCoverageFrom: ['<rootDir>/src/vendors/**/*.ts'],
  coverageProvider: 'v8',
  coverageReporters: ['text-summary'],
  coverageDirectory: '<rootDir>/coverage/vendors',
};
