// The e2e files of the speech operation and its OpenAI door: run as one Jest file (docs/contributors/development.md,
// "The test run"). One alone: add -t '<its describe>'.
import './speech.e2e.js';
