// The e2e files of video failing over after acceptance (routing by cost, stalls) and of Seedance: one Jest
// file (see video-vendors.group.spec.ts). One alone: add -t '<its describe>'.
import './seedance.e2e.js';
import './video-failover.e2e.js';
