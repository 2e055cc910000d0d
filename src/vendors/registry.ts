import { CONTENT_WORDS } from './contracts/content-refusal.js';
import type { VendorDescriptor } from './contracts/vendor.js';
import { BFL } from './bfl/bfl.vendor.js';
import { ELEVENLABS } from './elevenlabs/elevenlabs.vendor.js';
import { GATEWAY } from './gateway/gateway.vendor.js';
import { GOOGLE } from './google/google.vendor.js';
import { KLING } from './kling/kling.vendor.js';
import { LUMA } from './luma/luma.vendor.js';
import { MINIMAX } from './minimax/minimax.vendor.js';
import { MUREKA } from './mureka/mureka.vendor.js';
import { OPENAI } from './openai/openai.vendor.js';
import { RUNWAY } from './runway/runway.vendor.js';
import { SEEDANCE } from './seedance/seedance.vendor.js';
import { STABILITY } from './stability/stability.vendor.js';
import { SUNO_AGGREGATOR } from './suno-aggregator/suno-aggregator.vendor.js';
import { SUNOAPI } from './sunoapi/sunoapi.vendor.js';
import { WAN } from './wan/wan.vendor.js';

/**
 * The vendors, one descriptor each (its folder's `<vendor>.vendor.ts`): what the channels accept (protocol,
 * operations, credentials), how they authenticate and test an account, and what the docs and the channel
 * DTO say of each. A new vendor is a folder and a line here.
 */
export const VENDORS: readonly VendorDescriptor[] = [KLING, LUMA, RUNWAY, MINIMAX, SEEDANCE, WAN, STABILITY, BFL, OPENAI, GOOGLE, ELEVENLABS, SUNO_AGGREGATOR, SUNOAPI, MUREKA, GATEWAY];

export function vendorOf(protocol: string): VendorDescriptor | undefined {
  return VENDORS.find((v) => v.protocol === protocol);
}

/**
 * Whether a vendor's failure (a failed task's reason, or a refused request's words, as its adapters give them) is
 * its moderation refusing what was asked: its descriptor's `contentRefusal` (the words every vendor uses for a
 * protocol none declares). The one classification of content refusals, for every operation.
 */
export function refusesContent(protocol: string, words: string): boolean {
  return (vendorOf(protocol)?.contentRefusal ?? CONTENT_WORDS).test(words);
}

/** Whether a task's stored failure reads as some vendor's content refusal, whichever made it (OpenAI's Images door answers it as moderation_blocked). */
export function readsAsContentRefusal(words: string): boolean {
  return VENDORS.some((v) => v.contentRefusal.test(words));
}
