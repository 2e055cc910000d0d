// The e2e files of expands, lyrics, the sunoapi.org door and the sandbox's jobs end to end:
// run as one Jest file, the app's module graph is loaded once and later
// apps start warm (docs/contributors/development.md, "The test run"). One alone: add -t '<its describe>'.
// Songs, their stems and audio are sandbox-music.group.spec.ts (as one, the two outlasted the rest of the run).
import './jobs-sandbox.e2e.js';
import './expand.e2e.js';
import './sunoapi-door.e2e.js';
import './lyrics.e2e.js';
