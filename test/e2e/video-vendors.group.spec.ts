// The e2e files of the video vendors whose fakes answer slowly:
// run as one Jest file, the app's module graph is loaded once and later
// apps start warm (docs/contributors/development.md, "The test run"). One alone: add -t '<its describe>'.
// Seedance and failover after acceptance are video-failover.group.spec.ts: most of both is waiting on
// polls (five seconds apart, Wan's, Seedance's and MiniMax's documented pace), which two files overlap.
import './wan.e2e.js';
import './declared-models.e2e.js';
import './minimax.e2e.js';
