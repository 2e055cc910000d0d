/**
 * The e2e files of one theme (keys, errors, headers, the documents and probes every route shares), run as one Jest test file.
 * Jest loads a test file's module graph (the app's ~2,400 modules) afresh for each file and the app's code
 * starts cold each time: a file that only boots the app cost about 5 s of CPU before its first test. Run
 * together, they load it once and later apps start warm (8 small files: 45-57 s of CPU apart, 27-29 s as one).
 * Each keeps its own describe, apps and databases; none sets process-wide state. Run one alone with
 * `npm test -- test/e2e/api-surface.group.spec.ts -t '<its describe>'`.
 */
import './auth.e2e.js';
import './errors.e2e.js';
import './unicode.e2e.js';
import './door-enums.e2e.js';
import './security-headers.e2e.js';
import './intake.e2e.js';
import './samples.e2e.js';
import './task-end.e2e.js';
import './overload.e2e.js';
import './swagger.e2e.js';
import './metrics-access.e2e.js';
import './health.e2e.js';
