// The e2e files of songs in the sandbox (real audio): uploads continued, chains joined, WAV and FLAC, lyrics
// timed, stems, ElevenLabs' door: one Jest file (see sandbox-jobs.group.spec.ts). One alone: add -t '<its describe>'.
import './music.e2e.js';
import './music-wav.e2e.js';
import './elevenlabs-music-door.e2e.js';
import './music-lyrics.e2e.js';
import './stems.e2e.js';
