import { readFileSync } from 'node:fs';
import path from 'node:path';
import Sequencer from '@jest/test-sequencer';

/**
 * Seconds each test file took in a full run on the 2-core CI machine (test-durations.json, refreshed by hand
 * when files change much). Jest runs the slowest files first so that no worker is left alone with a
 * two-minute file at the end; it knows their durations from its cache, which a fresh clone does not have:
 * there it ordered by file size, and the slowest files (Swagger UI, relay-watch) started last. Measured:
 * a fresh clone's Jest took 605-636 s against 517 s in a warm tree.
 */
const DURATIONS = JSON.parse(readFileSync(new URL('./test-durations.json', import.meta.url), 'utf8'));

export default class SlowestFirst extends Sequencer {
  time(test) {
    return super.time(test) ?? DURATIONS[path.relative(test.context.config.rootDir, test.path).split(path.sep).join('/')];
  }
}
