// The e2e files of music, lyrics and status queries across vendors behind the Suno-style door: one Jest file
// (see relayed-music.group.spec.ts). One alone: add -t '<its describe>'.
import './music-vendors.e2e.js';
import './lyrics-vendors.e2e.js';
import './relay-queries.e2e.js';
