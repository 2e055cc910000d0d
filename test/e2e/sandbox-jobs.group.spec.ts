// The e2e files of songs, expands and the sandbox's jobs end to end:
// run as one Jest file, the app's module graph is loaded once and later
// apps start warm (docs/contributors/development.md, "The test run"). One alone: add -t '<its describe>'.
import './music.e2e.js';
import './jobs-sandbox.e2e.js';
import './expand.e2e.js';
import './music-wav.e2e.js';
import './elevenlabs-music-door.e2e.js';
import './sunoapi-door.e2e.js';
import './music-lyrics.e2e.js';
import './lyrics.e2e.js';
import './stems.e2e.js';
