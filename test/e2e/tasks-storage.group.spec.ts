/**
 * The e2e files of one theme (the task engine, its tables and queue, and where results are kept), run as one Jest test file.
 * Jest loads a test file's module graph (the app's ~2,400 modules) afresh for each file and the app's code
 * starts cold each time: a file that only boots the app cost about 5 s of CPU before its first test. Run
 * together, they load it once and later apps start warm (8 small files: 45-57 s of CPU apart, 27-29 s as one).
 * Each keeps its own describe, apps and databases; none sets process-wide state. Run one alone with
 * `npm test -- test/e2e/tasks-storage.group.spec.ts -t '<its describe>'`.
 */
import './task-list.e2e.js';
import './task-kind.e2e.js';
import './orphans.e2e.js';
import './task-table-upgrade.e2e.js';
import './query-plans.e2e.js';
import './queue-jobs.e2e.js';
import './bytea-copy.e2e.js';
import './schema-drift.e2e.js';
import './migrator.e2e.js';
import './storage.e2e.js';
import './work-dir.e2e.js';
import './audio.e2e.js';
import './outbound.e2e.js';
