import { BflImageVendor } from './bfl/bfl-image.vendor.js';
import type { ImageModelSpec } from './contracts/image-request.js';
import type { ImageVendor } from './contracts/image-vendor.js';
import { GeminiImageVendor } from './google/gemini-image.vendor.js';
import { KlingImageVendor } from './kling/kling-image.vendor.js';
import { OpenAIImageVendor } from './openai/openai-image.vendor.js';
import { StabilityImageVendor } from './stability/stability-image.vendor.js';

/**
 * The registry of image vendors: one adapter class per channel protocol (each `static readonly protocol`
 * and `models`). A gateway channel speaks this interface's OpenAI Images door (GATEWAY_IMAGE_PROTOCOL).
 */
export const IMAGE_VENDORS = [BflImageVendor, StabilityImageVendor, KlingImageVendor, OpenAIImageVendor, GeminiImageVendor] as const satisfies readonly ImageVendorAdapter[];

/** What an image adapter class is to the registry: it makes ImageVendors, and says its protocol and models without one. */
interface ImageVendorAdapter {
  new (...args: never[]): ImageVendor;
  readonly protocol: string;
  readonly models: readonly ImageModelSpec[];
}

export type ImageVendorClass = (typeof IMAGE_VENDORS)[number];

/** The protocol whose adapter a gateway channel's images go through (it speaks the OpenAI Images door). */
export const GATEWAY_IMAGE_PROTOCOL = 'openai';

/** The adapter class of a channel protocol for images; undefined when it has none. */
export function imageVendorOf(protocol: string): { protocol: string; models: readonly ImageModelSpec[] } | undefined {
  const wanted = protocol === 'gateway' ? GATEWAY_IMAGE_PROTOCOL : protocol;
  return (IMAGE_VENDORS as readonly ImageVendorAdapter[]).find((v) => v.protocol === wanted);
}

/** The models a protocol offers for images, by the vendor's ids. */
export function imageCatalogOf(protocol: string): readonly ImageModelSpec[] {
  return imageVendorOf(protocol)?.models ?? [];
}
