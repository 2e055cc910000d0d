// The e2e files of hostile and heavy callers: the fuzzer, bodies cut short or inflating, per-owner limits:
// run as one Jest file, the app's module graph is loaded once and later
// apps start warm (docs/contributors/development.md, "The test run"). One alone: add -t '<its describe>'.
import './fuzz.e2e.js';
import './early-answers.e2e.js';
import './limits.e2e.js';
