// The e2e files of channels relaying video, audio and music: failover, callbacks from vendors, Veo, two
// instances: one Jest file (see relayed-music.group.spec.ts). One alone: add -t '<its describe>'.
import './channels-operations.e2e.js';
import './vendor-callbacks.e2e.js';
import './veo.e2e.js';
