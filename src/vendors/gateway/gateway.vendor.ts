import { KLING } from '../kling/kling.vendor.js';
import { LUMA } from '../luma/luma.vendor.js';
import { AGGREGATOR_PROBE } from '../suno-aggregator/suno-aggregator.vendor.js';
import { bearerAuth, type VendorDescriptor } from '../contracts/vendor.js';
import { contentRefusals } from '../contracts/content-refusal.js';

/**
 * A service speaking this interface (Bearer api_key): its expand door is Kling's, its video door Luma's, its
 * music doors an aggregator's, its image and speech doors OpenAI's (under one base, …/openai/v1); one channel has
 * one base URL, so it takes one group of operations.
 */
export const GATEWAY: VendorDescriptor = {
  protocol: 'gateway',
  title: 'a service speaking this interface',
  operations: ['expand', 'video', 'audio', 'music', 'image', 'speech'],
  groups: [['expand'], ['video'], ['audio', 'music'], ['image', 'speech']],
  credentials: ['api_key'],
  baseUrl: { rule: "its door's base: …/video-a for expand, …/video-b/v1 for video, …/music-a for audio and music, …/openai/v1 for images and speech", example: 'https://other-gateway/video-a' },
  // its content refusals: another gateway words its refusals as this one does: the vendors' own words
  contentRefusal: contentRefusals(),
  pollFloorS: 0,
  probe: (operations) =>
    operations.includes('expand') ? KLING.probe(['expand']) : operations.includes('video') ? LUMA.probe(['video']) : operations.includes('image') || operations.includes('speech') ? { path: '/models', notFoundPasses: false } : AGGREGATOR_PROBE,
  auth: bearerAuth,
};
