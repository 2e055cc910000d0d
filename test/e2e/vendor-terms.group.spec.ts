// The e2e files of vendors' SDKs, billing and parameters, and callers' URLs:
// run as one Jest file, the app's module graph is loaded once and later
// apps start warm (docs/contributors/development.md, "The test run"). One alone: add -t '<its describe>'.
import './luma-sdk.e2e.js';
import './runway-sdk.e2e.js';
import './vendor-billing.e2e.js';
import './music-params.e2e.js';
import './outbound-purpose.e2e.js';
