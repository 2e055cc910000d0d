import { KlingVideoVendor } from './kling/kling-video.vendor.js';
import { LumaVendor } from './luma/luma-video.vendor.js';
import { MinimaxVideoVendor } from './minimax/minimax-video.vendor.js';
import { RunwayVendor } from './runway/runway-video.vendor.js';
import type { VideoModelSpec } from './contracts/video-request.js';

/**
 * The registry of video vendors: one adapter per channel protocol. A gateway speaking this interface's
 * Luma door is Luma's protocol (its models are Luma's names).
 */
export const VIDEO_VENDORS = [LumaVendor, KlingVideoVendor, RunwayVendor, MinimaxVideoVendor] as const;

export type VideoVendorClass = (typeof VIDEO_VENDORS)[number];

/** The protocol whose adapter a gateway channel's video goes through (it speaks the Luma door). */
export const GATEWAY_VIDEO_PROTOCOL = LumaVendor.protocol;

/** The adapter class of a channel protocol for video; undefined when it has none. */
export function videoVendorOf(protocol: string): VideoVendorClass | undefined {
  return VIDEO_VENDORS.find((v) => v.protocol === (protocol === 'gateway' ? GATEWAY_VIDEO_PROTOCOL : protocol));
}

/** The models a protocol offers for video, by the vendor's ids. */
export function videoCatalogOf(protocol: string): readonly VideoModelSpec[] {
  return videoVendorOf(protocol)?.models ?? [];
}
