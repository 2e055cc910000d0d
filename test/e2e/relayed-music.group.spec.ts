// The e2e files of music, lyrics and stems relayed to Suno-style aggregators and ElevenLabs: run as one Jest
// file, the app's module graph is loaded once and later apps start warm (docs/contributors/development.md,
// "The test run"). One alone: add -t '<its describe>'. The tasks relayed to vendors are three such groups
// (relayed-music, relayed-vendors, relayed-channels): as one, its 400 s of waiting on polls and deadlines
// outlasted the rest of the run once six files ran at once.
import './music-relay.e2e.js';
import './music-lyrics-relay.e2e.js';
import './stems-relay.e2e.js';
