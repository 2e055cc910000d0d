// The e2e files of the task engine, its tables and queue, and storage:
// run as one Jest file, the app's module graph is loaded once and later
// apps start warm (docs/contributors/development.md, "The test run"). One alone: add -t '<its describe>'.
import './task-list.e2e.js';
import './task-kind.e2e.js';
import './orphans.e2e.js';
import './task-table-upgrade.e2e.js';
import './query-plans.e2e.js';
import './plan-reuse.e2e.js';
import './queue-jobs.e2e.js';
import './bytea-copy.e2e.js';
import './schema-drift.e2e.js';
import './migrator.e2e.js';
import './storage.e2e.js';
import './work-dir.e2e.js';
import './silent-connections.e2e.js';
import './audio.e2e.js';
import './outbound.e2e.js';
import './notifications.e2e.js';
