import type { StemsModelSpec, StemsVendor } from './contracts/stems-vendor.js';
import { ElevenLabsStemsVendor } from './elevenlabs/elevenlabs-stems.vendor.js';
import { SunoapiStemsVendor } from './sunoapi/sunoapi-stems.vendor.js';

/**
 * The registry of stems vendors: one adapter class per channel protocol (each `static readonly protocol` and
 * `models`). A gateway channel takes no stems: the clip to split is stored here, and another gateway holds none
 * of our clips.
 */
export const STEMS_VENDORS = [ElevenLabsStemsVendor, SunoapiStemsVendor] as const satisfies readonly { new (...args: never[]): StemsVendor; readonly protocol: string; readonly models: readonly StemsModelSpec[] }[];

/** The protocol RELAY_STEMS_URL speaks when no vendor's credential variables say otherwise: ElevenLabs' API. */
export const STEMS_CONFIG_PROTOCOL = ElevenLabsStemsVendor.protocol;

/** The stems models a channel of a protocol may list (none for a protocol without stems, a gateway's among them). */
export function stemsCatalogOf(protocol: string): readonly StemsModelSpec[] {
  return STEMS_VENDORS.find((v) => v.protocol === protocol)?.models ?? [];
}
