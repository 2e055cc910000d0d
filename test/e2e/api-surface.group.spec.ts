// The e2e files of keys, errors, headers, documents and probes:
// run as one Jest file, the app's module graph is loaded once and later
// apps start warm (docs/contributors/development.md, "The test run"). One alone: add -t '<its describe>'.
import './auth.e2e.js';
import './auth-failures.e2e.js';
import './errors.e2e.js';
import './unicode.e2e.js';
import './door-enums.e2e.js';
import './security-headers.e2e.js';
import './intake.e2e.js';
import './samples.e2e.js';
import './task-end.e2e.js';
import './counters.e2e.js';
import './overload.e2e.js';
import './swagger.e2e.js';
import './metrics-access.e2e.js';
import './health.e2e.js';
