// The e2e files of tasks relayed to vendors: channels, callbacks, polling:
// run as one Jest file, the app's module graph is loaded once and later
// apps start warm (docs/contributors/development.md, "The test run"). One alone: add -t '<its describe>'.
import './music-relay.e2e.js';
import './music-vendors.e2e.js';
import './lyrics-vendors.e2e.js';
import './vendor-callbacks.e2e.js';
import './channels-operations.e2e.js';
import './veo.e2e.js';
import './relay-queries.e2e.js';
import './music-lyrics-relay.e2e.js';
import './stems-relay.e2e.js';
