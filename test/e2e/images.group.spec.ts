// The e2e files of image generation and expand through every image vendor and door:
// run as one Jest file, the app's module graph is loaded once and later
// apps start warm (docs/contributors/development.md, "The test run"). One alone: add -t '<its describe>'.
import './image-vendors-a.e2e.js';
import './image-vendors-b.e2e.js';
import './image-doors.e2e.js';
import './image-openai-stream.e2e.js';
import './image-fakes-sdk.e2e.js';
import './expand-stability.e2e.js';
import './kling.e2e.js';
import './robustness.e2e.js';
import './fail-fast.e2e.js';
import './held-wake.e2e.js';
