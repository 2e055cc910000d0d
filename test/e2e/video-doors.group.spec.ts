// The e2e files of video generation through every video door:
// run as one Jest file, the app's module graph is loaded once and later
// apps start warm (docs/contributors/development.md, "The test run"). One alone: add -t '<its describe>'.
import './video.e2e.js';
import './video-roles.e2e.js';
import './kling-videos.e2e.js';
import './openai-videos.e2e.js';
import './video-vendors.e2e.js';
import './video-params.e2e.js';
