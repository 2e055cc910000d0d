/**
 * The e2e files of one theme (video generation through every video door and its vendors), run as one Jest test file.
 * Jest loads a test file's module graph (the app's ~2,400 modules) afresh for each file and the app's code
 * starts cold each time: a file that only boots the app cost about 5 s of CPU before its first test. Run
 * together, they load it once and later apps start warm (8 small files: 45-57 s of CPU apart, 27-29 s as one).
 * Each keeps its own describe, apps and databases; none sets process-wide state. Run one alone with
 * `npm test -- test/e2e/video-doors.group.spec.ts -t '<its describe>'`.
 */
import './video.e2e.js';
import './video-roles.e2e.js';
import './kling-videos.e2e.js';
import './openai-videos.e2e.js';
import './video-vendors.e2e.js';
